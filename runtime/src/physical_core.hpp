// One compute core shared by several models' contexts (ConcurrentMachine). Coarse-grained multithreading: a
// context holds the core from when it resumes until it stalls (a DMA wait, a barrier, a blocking register or
// condition wait, the end of its kernel); a context that becomes ready while another holds the core waits for
// that stall, and taking the core from another context costs arch.context_switch_cycles. A stall of known length
// no longer than two switches (out and back in) does not give the core up: switching would cost more than it wins.
#pragma once

#include <boost/fiber/condition_variable.hpp>
#include <cstdint>
#include <vector>

#include "ldmsim/runtime/concurrent.hpp"
#include "ldmsim/sim/types.hpp"

namespace ldmsim::detail {

class PhysicalCore {
 public:
  /// Spans kept per core for the schedule picture (24 bytes each). When full, neighbours are merged in pairs (the
  /// pair takes the context that held longer): the picture coarsens instead of stopping.
  static constexpr std::size_t kMaxSpans = 4096;

  bool held() const { return holder_ >= 0; }
  int holder() const { return holder_; }
  /// `context`, ready at `ready` and the core not held, takes it: returns when its work starts (after the core's
  /// last holder released it, plus a switch when that was another context).
  Cycle take(std::uint32_t context, Cycle ready, Cycle switch_cycles);
  /// The holder stalls at `now`: the core is free from then on; wakes the contexts waiting for it.
  void release(Cycle now);
  /// The holder stalls from `from` to `to` and keeps the core (a short stall): idle, not its time.
  void idle(Cycle from, Cycle to);
  /// `context` waits for its DMA from `from` to `to` (before it releases the core or idles on it).
  void dma_wait(std::uint32_t context, Cycle from, Cycle to);

  const SharedCoreStats& stats() const { return stats_; }
  const std::vector<ScheduleSpan>& spans() const { return spans_; }
  /// DMA waits by start (a context's overlapping or touching waits joined), bounded like spans().
  const std::vector<ScheduleSpan>& dma_waits() const { return waits_; }
  /// Notified at every release (waiters re-check held()).
  boost::fibers::condition_variable_any& released() { return released_; }

  /// The core's RMA engine (SW26010-Pro): next free issue slot and link, shared by every context on the core.
  Cycle rma_issue_free = 0;
  Cycle rma_link_free = 0;

 private:
  void add_span(ScheduleSpan span);
  /// Appends to `list`, merging neighbours in pairs when it holds kMaxSpans (counted as a compaction).
  void append_bounded(std::vector<ScheduleSpan>& list, ScheduleSpan span);

  int holder_ = -1;
  int last_ = -1;  // the context whose registers the core holds
  Cycle free_at_ = 0;
  Cycle held_since_ = 0;
  SharedCoreStats stats_;
  std::vector<ScheduleSpan> spans_;
  std::vector<ScheduleSpan> waits_;
  boost::fibers::condition_variable_any released_;
};

}  // namespace ldmsim::detail
