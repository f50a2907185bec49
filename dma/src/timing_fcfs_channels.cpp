// The `fcfs-channels` timing model: a core group's DMA engine has `channels` identical channels; each request
// takes the channel that frees first (first-come-first-served) and occupies it for a setup cost, a cost per
// block after the first of a strided request, a realignment cost per misaligned block that spans several memory
// transactions, its transactions at the channel's share of the read or write bandwidth, and for puts a
// read-modify-write per partly written transaction, and a wait for each earlier block of the request still using the
// line a block starts in; the reply reaches the core latency_cycles later. BCAST gets can have a channel of their
// own that costs the larger of a per-block and a per-byte time (ROW gets are priced as PE gets). Equations and
// fit: docs/timing-model.md.
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
    strided_realign_ = params.number("strided_realign_cycles", realign_, 0);
    put_realign_ = params.number("put_realign_cycles", realign_, 0);
    shared_line_ = params.number("shared_line_cycles", 0, 0);
    line_queue_ = params.number("line_queue_cycles", 0, 0);
    // 0: off (BCAST gets share the PE channels); otherwise a bandwidth like the others.
    const double broadcast_bytes_per_cycle = params.number("broadcast_bytes_per_cycle", 0, 0) == 0
                                                 ? 0
                                                 : params.bytes_per_cycle("broadcast_bytes_per_cycle", 0);
    broadcast_block_ = params.number("broadcast_block_cycles", 0, 0);
    broadcast_word_queue_ = params.number("broadcast_word_queue_cycles", 0, 0);
    if ((broadcast_block_ > 0 || broadcast_word_queue_ > 0) && broadcast_bytes_per_cycle <= 0) {
      throw ConfigError(
          "dma.timing: broadcast_block_cycles and broadcast_word_queue_cycles price the broadcast channel, which "
          "needs broadcast_bytes_per_cycle > 0");
    }
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
    if (broadcast_bytes_per_cycle > 0) {  // BCAST gets have one channel of their own at this rate
      broadcast_transaction_cycles_ = static_cast<double>(transaction_bytes_) / broadcast_bytes_per_cycle;
      broadcast_byte_cycles_ = 1.0 / broadcast_bytes_per_cycle;
    }
  }

  Cycle issue_cycles(const DmaRequest&) const override { return issue_; }

  double service_cycles(const DmaRequest& request) const override {
    if (broadcast_channel(request) && broadcast_block_ > 0) {
      // Blocks are delivered one per broadcast_block_cycles at best, bytes at the broadcast rate at best.
      const double blocks = static_cast<double>(priced_blocks(request));
      return overhead_ +
             std::max(blocks * broadcast_block_, static_cast<double>(request.length) * broadcast_byte_cycles_);
    }
    const TransactionShape shape = transaction_shape(request, transaction_bytes_);
    const bool put = request.op == DmaOp::kPut;  // BCAST (off its channel) and ROW gets read memory once
    const double per_transaction = put                          ? put_transaction_cycles_
                                   : broadcast_channel(request) ? broadcast_transaction_cycles_
                                                                : get_transaction_cycles_;
    const bool strided = shape.blocks > 1;
    const double realign = strided ? strided_realign_ : put ? put_realign_ : realign_;
    return overhead_ + static_cast<double>(std::max<std::uint64_t>(shape.blocks, 1) - 1) * block_ +
           static_cast<double>(shape.realigned_blocks) * realign +
           static_cast<double>(shape.shared_line_blocks) * shared_line_ +
           static_cast<double>(shape.line_queue) * line_queue_ +
           static_cast<double>(shape.transactions) * per_transaction +
           (put ? static_cast<double>(shape.partial_transactions) * partial_put_ : 0.0);
  }

  DmaTiming schedule(const DmaRequest& request, Cycle issue, int) override {
    const double service = service_cycles(request);
    if (broadcast_channel(request)) {
      const double begin = std::max(static_cast<double>(issue), broadcast_free_at_);
      broadcast_free_at_ = begin + service;
      return to_cycles(begin, broadcast_free_at_, latency_ + word_queue_delay(request));
    }
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
  double strided_realign_ = 0;  // a realigned block of a strided request
  double put_realign_ = 0;      // a realigned block of a contiguous put
  double line_queue_ = 0;       // per earlier block of the request still in a block's first line
  double broadcast_block_ = 0;  // > 0: a broadcast get costs max(blocks x this, bytes / rate)
  double broadcast_byte_cycles_ = 0;
  double broadcast_word_queue_ = 0;          // reply delay per earlier narrow block in the same ldm word
  double shared_line_ = 0;                   // a block starting in the line the previous block ended in
  double broadcast_transaction_cycles_ = 0;  // > 0: BCAST gets on their own channel
  double broadcast_free_at_ = 0;

  /// Broadcast blocks narrower than an ldm word (32 bytes) land in a word that earlier blocks of the request
  /// also write: each waits for those, B * (32 / bsize - 1) / 2 waits in all. It delays the reply, not the
  /// channel (the two gets of one core overlap it, as measured).
  double word_queue_delay(const DmaRequest& request) const {
    constexpr double kLdmWordBytes = 32;
    const auto block = static_cast<double>(request.block_bytes());
    const std::uint64_t blocks = priced_blocks(request);
    if (broadcast_word_queue_ <= 0 || blocks <= 1 || block >= kLdmWordBytes) return 0;
    return broadcast_word_queue_ * static_cast<double>(blocks) * (kLdmWordBytes / block - 1) / 2;
  }

  bool broadcast_channel(const DmaRequest& request) const {
    // Only BCAST has measurements (swCandle); a ROW get reads memory once for one row, priced as a PE get.
    return broadcast_transaction_cycles_ > 0 && request.op == DmaOp::kGet && request.mode == DmaMode::kBcast;
  }
  std::vector<double> free_at_;  // per channel: busy with earlier requests until this cycle
};

}  // namespace

std::unique_ptr<TimingModel> make_fcfs_channels_model(const Arch& arch) {
  return std::make_unique<FcfsChannelsModel>(arch);
}

}  // namespace ldmsim::detail
