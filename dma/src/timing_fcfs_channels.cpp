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

/// Transactions of a request's main-memory side, and its blocks that need realigning: they start inside a
/// transaction-sized line and continue into the next, so every line the channel delivers merges two lines.
struct BlockShape {
  std::uint64_t transactions = 0;
  std::uint64_t realigned_blocks = 0;
};

BlockShape shape_of(const DmaRequest& request, std::uint64_t transaction_bytes) {
  BlockShape shape;
  const std::uint64_t block = request.block_bytes();
  for (std::uint64_t i = 0; i < request.block_count(); ++i) {
    const std::uint64_t first = request.main + i * request.block_pitch();
    const std::uint64_t lines = (first + block - 1) / transaction_bytes - first / transaction_bytes + 1;
    shape.transactions += lines;
    if (lines > 1 && first % transaction_bytes != 0) ++shape.realigned_blocks;
  }
  return shape;
}

class FcfsChannelsModel final : public TimingModel {
 public:
  explicit FcfsChannelsModel(const Arch& arch) : transaction_bytes_(arch.dma.transaction_bytes) {
    TimingParams params(arch.dma.timing);
    issue_ = static_cast<Cycle>(std::llround(params.number("issue_cycles", 10, 0)));
    const double channels = params.number("channels", 1, 1);
    if (channels != std::floor(channels) || channels > 1024) {
      throw ConfigError(fmt::format("dma.timing.channels must be an integer in 1..1024 (got {})", channels));
    }
    overhead_ = params.number("request_overhead_cycles", 0, 0);
    realign_ = params.number("realign_cycles", 0, 0);
    const double bytes_per_cycle = params.number("bytes_per_cycle", 16, 0, /*strictly_greater=*/true);
    latency_ = params.number("latency_cycles", 100, 0);
    params.reject_unknown();
    free_at_.assign(static_cast<std::size_t>(channels), 0.0);
    // Each channel moves its transactions at its share of the group's peak memory bandwidth.
    transaction_cycles_ = static_cast<double>(transaction_bytes_) * channels / bytes_per_cycle;
  }

  Cycle issue_cycles(const DmaRequest&) const override { return issue_; }

  DmaTiming schedule(const DmaRequest& request, Cycle issue, int) override {
    const BlockShape shape = shape_of(request, transaction_bytes_);
    const double service = overhead_ + static_cast<double>(shape.realigned_blocks) * realign_ +
                           static_cast<double>(shape.transactions) * transaction_cycles_;
    auto channel = std::min_element(free_at_.begin(), free_at_.end());  // first to free; ties: lowest index
    const double start = std::max(static_cast<double>(issue), *channel);
    *channel = start + service;
    const auto start_cycle = static_cast<Cycle>(std::ceil(start));
    const auto end_cycle = static_cast<Cycle>(std::ceil(*channel + latency_));
    return {start_cycle, std::max(end_cycle, start_cycle)};
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
