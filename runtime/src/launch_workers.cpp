// Persistent launch threads (see launch_workers.hpp).
#include "launch_workers.hpp"

#include <boost/fiber/operations.hpp>

#include "scheduler.hpp"

namespace ldmsim::detail {

LaunchWorkers::~LaunchWorkers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  for (Slot& slot : slots_) slot.work.notify_one();
  for (Slot& slot : slots_) {
    if (slot.thread.joinable()) slot.thread.join();
  }
}

void LaunchWorkers::start(std::vector<std::function<void()>> jobs) {
  std::lock_guard lock(mutex_);
  for (std::size_t w = 0; w < jobs.size() && w < slots_.size(); ++w) {
    if (!jobs[w]) continue;
    Slot& slot = slots_[w];
    slot.job = std::move(jobs[w]);
    slot.has_job = true;
    ++pending_;
    if (!slot.thread.joinable()) {
      slot.thread = std::thread([this, &slot] { serve(slot); });
    } else {
      slot.work.notify_one();
    }
  }
}

void LaunchWorkers::wait() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
}

void LaunchWorkers::serve(Slot& slot) {
  boost::fibers::use_scheduling_algorithm<CycleOrderedScheduler>();
  std::unique_lock lock(mutex_);
  for (;;) {
    slot.work.wait(lock, [&] { return slot.has_job || stop_; });
    if (!slot.has_job) return;  // stopping, nothing left to do
    std::function<void()> job = std::move(slot.job);
    lock.unlock();
    job();
    job = nullptr;  // whatever the job held goes before the round is reported done
    lock.lock();
    slot.has_job = false;
    if (--pending_ == 0) done_.notify_all();
  }
}

}  // namespace ldmsim::detail
