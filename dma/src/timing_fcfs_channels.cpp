// The `fcfs-channels` timing model: a core group's DMA engine has `channels` identical channels; each request
// takes the channel that frees first (first-come-first-served) and occupies it for a setup cost, a cost per
// block after the first of a strided request, a realignment cost per misaligned block that spans several memory
// transactions, its transactions at the channel's share of the read or write bandwidth, and for puts a
// read-modify-write per partly written transaction; the reply reaches the core latency_cycles later. Equations and fit:
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
    block_ = params.number("block_cycles", 0, 0);
    partial_put_ = params.number("partial_put_cycles", 0, 0);
    const double bytes_per_cycle = params.bytes_per_cycle("bytes_per_cycle", 16);
    const double put_bytes_per_cycle = params.bytes_per_cycle("put_bytes_per_cycle", bytes_per_cycle);
    latency_ = params.number("latency_cycles", 100, 0);
    params.reject_unknown();
    free_at_.assign(static_cast<std::size_t>(channels), 0.0);
    // Each channel moves its transactions at its share of the group's peak memory bandwidth (reads and writes).
    const double channel_bytes = static_cast<double>(transaction_bytes_) * static_cast<double>(channels);
    get_transaction_cycles_ = channel_bytes / bytes_per_cycle;
    put_transaction_cycles_ = channel_bytes / put_bytes_per_cycle;
  }

  Cycle issue_cycles(const DmaRequest&) const override { return issue_; }

  double service_cycles(const DmaRequest& request) const override {
    const TransactionShape shape = transaction_shape(request, transaction_bytes_);
    const bool put = request.op == DmaOp::kPut;  // BCAST and ROW gets read memory once, like a PE get
    const double per_transaction = put ? put_transaction_cycles_ : get_transaction_cycles_;
    return overhead_ + static_cast<double>(std::max<std::uint64_t>(shape.blocks, 1) - 1) * block_ +
           static_cast<double>(shape.realigned_blocks) * realign_ +
           static_cast<double>(shape.transactions) * per_transaction +
           (put ? static_cast<double>(shape.partial_transactions) * partial_put_ : 0.0);
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
  double block_ = 0;        // each block after the first of a strided request: its own memory access
  double partial_put_ = 0;  // a put that covers a transaction partly: read-modify-write of the line
  double latency_ = 0;
  double get_transaction_cycles_ = 1;
  double put_transaction_cycles_ = 1;
  std::vector<double> free_at_;  // per channel: busy with earlier requests until this cycle
};

}  // namespace

std::unique_ptr<TimingModel> make_fcfs_channels_model(const Arch& arch) {
  return std::make_unique<FcfsChannelsModel>(arch);
}

}  // namespace ldmsim::detail
