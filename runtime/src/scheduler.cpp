// Cycle-ordered fiber scheduling (see scheduler.hpp).
#include "scheduler.hpp"

#include <algorithm>
#include <limits>

namespace ldmsim::detail {

void CycleOrderedScheduler::awakened(boost::fibers::context* ctx, CoreOrder& order) noexcept {
  if (!ctx->is_context(boost::fibers::type::worker_context)) {
    // The control core and the dispatcher run only when no compute core is ready.
    last_.push_back(Entry{kNoCycle, std::numeric_limits<std::uint32_t>::max(), seq_++, ctx});
    return;
  }
  const Entry entry{order.cycle, order.id, seq_++, ctx};
  if (in_order_head_ == in_order_.size() || !Later{}(in_order_.back(), entry)) {
    in_order_.push_back(entry);
  } else {
    heap_.push_back(entry);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
}

boost::fibers::fiber_properties* CycleOrderedScheduler::new_properties(boost::fibers::context* ctx) {
  auto* props = new CoreOrder(ctx);
  props->scheduler = this;
  return props;
}

const CycleOrderedScheduler::Entry* CycleOrderedScheduler::first() const noexcept {
  const Entry* queued = in_order_head_ < in_order_.size() ? &in_order_[in_order_head_] : nullptr;
  if (!heap_.empty() && (queued == nullptr || Later{}(*queued, heap_.front()))) return &heap_.front();
  if (queued != nullptr) return queued;
  return last_.empty() ? nullptr : &last_.front();
}

bool CycleOrderedScheduler::earlier_ready(Cycle cycle, std::uint32_t id) const noexcept {
  const Entry* entry = first();
  return entry != nullptr && (entry->cycle < cycle || (entry->cycle == cycle && entry->id < id));
}

boost::fibers::context* CycleOrderedScheduler::pick_next() noexcept {
  const Entry* entry = first();
  if (entry == nullptr) return nullptr;
  boost::fibers::context* ctx = entry->ctx;
  if (!last_.empty() && entry == &last_.front()) {
    last_.pop_front();
  } else if (!heap_.empty() && entry == &heap_.front()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  } else if (++in_order_head_ == in_order_.size()) {
    in_order_.clear();
    in_order_head_ = 0;
  } else if (in_order_head_ >= 1024 && 2 * in_order_head_ >= in_order_.size()) {  // never drained: drop the taken
    in_order_.erase(in_order_.begin(), in_order_.begin() + static_cast<std::ptrdiff_t>(in_order_head_));
    in_order_head_ = 0;
  }
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
