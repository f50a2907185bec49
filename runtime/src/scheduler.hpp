// The Boost.Fiber scheduling algorithm that keeps a core group in simulated-time order: it always resumes
// the ready fiber with the smallest (cycle, core id). The control-core (main) fiber has an infinite key, so
// it runs only when no compute core is ready: then every live core is blocked, i.e. the group deadlocked.
#pragma once

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/properties.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim::detail {

class CycleOrderedScheduler;

/// The lock of a fiber condition_variable_any whose waiters all run on one host thread (cores of a group, or every
/// fiber of a pipelined run): nothing to exclude.
struct NoLock {
  void lock() {}
  void unlock() {}
};

/// The key of context k's program fiber in a pipelined run is kProgramKeyBase + k: after every core at the same
/// cycle, before the control fiber (which has the largest key).
inline constexpr std::uint32_t kProgramKeyBase = 0xFFFF0000u;

/// Per-fiber ordering key. A core sets it (without notify) before yielding; it is read when the fiber
/// becomes ready.
class CoreOrder : public boost::fibers::fiber_properties {
 public:
  explicit CoreOrder(boost::fibers::context* ctx) : fiber_properties(ctx) {}
  Cycle cycle = 0;
  std::uint32_t id = 0;
  const CycleOrderedScheduler* scheduler = nullptr;  ///< the algorithm of the fiber's host thread
};

/// The running fiber's key. boost::this_fiber::properties dynamic_casts at every call (a core's fiber starts each
/// launch with one); every fiber of a thread with this scheduler has a CoreOrder once it has been made ready.
inline CoreOrder& running_order() {
  auto* props = boost::fibers::context::active()->get_properties();
  return props != nullptr ? *static_cast<CoreOrder*>(props) : boost::this_fiber::properties<CoreOrder>();
}

class CycleOrderedScheduler final : public boost::fibers::algo::algorithm_with_properties<CoreOrder> {
 public:
  void awakened(boost::fibers::context* ctx, CoreOrder& order) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override {
    return in_order_head_ < in_order_.size() || !heap_.empty() || !last_.empty();
  }
  boost::fibers::fiber_properties* new_properties(boost::fibers::context* ctx) override;
  /// True when a ready compute core has a smaller key than (cycle, id). Boost's yield() switches to the best
  /// *other* ready fiber before re-queueing the yielding one, so a core must yield only when this holds.
  bool earlier_ready(Cycle cycle, std::uint32_t id) const noexcept;
  void suspend_until(std::chrono::steady_clock::time_point const& until) noexcept override;
  void notify() noexcept override;

 private:
  struct Entry {
    Cycle cycle;
    std::uint32_t id;
    std::uint64_t seq;  // FIFO among equal keys (fresh fibers), for determinism
    boost::fibers::context* ctx;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const noexcept {
      if (a.cycle != b.cycle) return a.cycle > b.cycle;
      if (a.id != b.id) return a.id > b.id;
      return a.seq > b.seq;
    }
  };
  /// The earliest ready entry, or null.
  const Entry* first() const noexcept;
  // Ready fibers in three parts, the order the same as one heap's (the keys are unique by seq):
  // - `in_order_`, compute cores that arrived in key order (a launch wakes its cores in core order, and a core
  //   mostly re-queues after every other ready one), taken from `in_order_head_` in O(1);
  // - `heap_`, a binary min-heap of the other compute cores;
  // - `last_`, the control core and the dispatcher (the largest key, first in first out), which would otherwise
  //   sit at the back of `in_order_` and turn every core woken after them away from it.
  std::vector<Entry> in_order_;
  std::size_t in_order_head_ = 0;
  std::vector<Entry> heap_;
  std::deque<Entry> last_;
  std::uint64_t seq_ = 0;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool notified_ = false;
};

}  // namespace ldmsim::detail
