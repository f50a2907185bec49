// Cycle-ordered fiber scheduling (see scheduler.hpp).
#include "scheduler.hpp"

#include <algorithm>
#include <limits>

namespace ldmsim::detail {

void CycleOrderedScheduler::awakened(boost::fibers::context* ctx, CoreOrder& order) noexcept {
  Entry entry{order.cycle, order.id, seq_++, ctx};
  if (!ctx->is_context(boost::fibers::type::worker_context)) {
    entry.cycle = kNoCycle;  // the control core and the dispatcher run only when no compute core is ready
    entry.id = std::numeric_limits<std::uint32_t>::max();
  }
  ready_.push_back(entry);
  std::push_heap(ready_.begin(), ready_.end(), Later{});
}

boost::fibers::fiber_properties* CycleOrderedScheduler::new_properties(boost::fibers::context* ctx) {
  auto* props = new CoreOrder(ctx);
  props->scheduler = this;
  return props;
}

bool CycleOrderedScheduler::earlier_ready(Cycle cycle, std::uint32_t id) const noexcept {
  if (ready_.empty()) return false;
  const Entry& first = ready_.front();
  return first.cycle < cycle || (first.cycle == cycle && first.id < id);
}

boost::fibers::context* CycleOrderedScheduler::pick_next() noexcept {
  if (ready_.empty()) return nullptr;
  std::pop_heap(ready_.begin(), ready_.end(), Later{});
  boost::fibers::context* ctx = ready_.back().ctx;
  ready_.pop_back();
  return ctx;
}

void CycleOrderedScheduler::suspend_until(std::chrono::steady_clock::time_point const& until) noexcept {
  std::unique_lock lock(mutex_);
  if (until == std::chrono::steady_clock::time_point::max()) {
    wakeup_.wait(lock, [this] { return notified_; });
  } else {
    wakeup_.wait_until(lock, until, [this] { return notified_; });
  }
  notified_ = false;
}

void CycleOrderedScheduler::notify() noexcept {
  {
    std::lock_guard lock(mutex_);
    notified_ = true;
  }
  wakeup_.notify_all();
}

}  // namespace ldmsim::detail
