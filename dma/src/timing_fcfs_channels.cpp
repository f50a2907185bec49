// The `fcfs-channels` timing model: a core group's DMA engine has `channels` identical channels; each request
// takes the channel that frees first (first-come-first-served) and occupies it for a setup cost, a realignment
// cost per misaligned block that spans several memory transactions, and its transactions at the channel's share
// of the memory bandwidth; the reply reaches the core latency_cycles later. Equations and fit:
// docs/timing-model.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "builtin_models.hpp"
#include "ldmsim/sim/fault.hpp"
#include "timing_params.hpp"

namespace ldmsim::detail {

namespace {

/// A realigned block (TransactionShape::realigned_blocks) starts inside a line and continues into the next, so
/// every line the channel delivers merges two memory lines: it pays realign_cycles once per block.
class FcfsChannelsModel final : public TimingModel {
 public:
  explicit FcfsChannelsModel(const Arch& arch) : transaction_bytes_(arch.dma.transaction_bytes) {
    TimingParams params(arch.dma.timing);
    issue_ = static_cast<Cycle>(std::llround(params.number("issue_cycles", 10, 0)));
    const auto channels = params.integer("channels", 1, 1, 1024);
    overhead_ = params.number("request_overhead_cycles", 0, 0);
    realign_ = params.number("realign_cycles", 0, 0);
    const double bytes_per_cycle = params.bytes_per_cycle("bytes_per_cycle", 16);
    latency_ = params.number("latency_cycles", 100, 0);
    params.reject_unknown();
    free_at_.assign(static_cast<std::size_t>(channels), 0.0);
    // Each channel moves its transactions at its share of the group's peak memory bandwidth.
    transaction_cycles_ = static_cast<double>(transaction_bytes_) * static_cast<double>(channels) / bytes_per_cycle;
  }

  Cycle issue_cycles(const DmaRequest&) const override { return issue_; }

  double service_cycles(const DmaRequest& request) const override {
    const TransactionShape shape = transaction_shape(request, transaction_bytes_);
    return overhead_ + static_cast<double>(shape.realigned_blocks) * realign_ +
           static_cast<double>(shape.transactions) * transaction_cycles_;
  }

  DmaTiming schedule(const DmaRequest& request, Cycle issue, int) override {
    const double service = service_cycles(request);
    auto channel = std::min_element(free_at_.begin(), free_at_.end());  // first to free; ties: lowest index
    const double start = std::max(static_cast<double>(issue), *channel);
    *channel = start + service;
    return to_cycles(start, *channel, latency_);
  }

 private:
  std::uint64_t transaction_bytes_;
  Cycle issue_ = 0;
  double overhead_ = 0;
  double realign_ = 0;
  double latency_ = 0;
  double transaction_cycles_ = 1;
  std::vector<double> free_at_;  // per channel: busy with earlier requests until this cycle
};

}  // namespace

std::unique_ptr<TimingModel> make_fcfs_channels_model(const Arch& arch) {
  return std::make_unique<FcfsChannelsModel>(arch);
}

}  // namespace ldmsim::detail
