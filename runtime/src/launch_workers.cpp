// Persistent launch threads (see launch_workers.hpp).
#include "launch_workers.hpp"

#include <boost/fiber/operations.hpp>
#include <exception>
#include <utility>

#include "scheduler.hpp"

namespace ldmsim::detail {

namespace {

/// The workers whose control core this thread (their worker 0) is running, if any.
thread_local const LaunchWorkers* t_controlling = nullptr;

}  // namespace

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
  const bool nested = t_controlling == this;
  std::lock_guard lock(mutex_);
  for (std::size_t w = 0; w < jobs.size() && w < slots_.size(); ++w) {
    if (!jobs[w]) continue;
    if (nested && w == 0) {  // this thread is worker 0: wait() runs it
      inline_job_ = std::move(jobs[w]);
      continue;
    }
    Slot& slot = slots_[w];
    slot.job = std::move(jobs[w]);
    slot.has_job = true;
    slot.nested = nested;
    ++(nested ? nested_pending_ : pending_);
    if (!slot.thread.joinable()) {
      slot.thread = std::thread([this, &slot] { serve(slot); });
    } else {
      slot.work.notify_one();
    }
  }
}

void LaunchWorkers::wait() {
  if (t_controlling == this) {
    if (inline_job_) std::exchange(inline_job_, nullptr)();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return nested_pending_ == 0; });
    return;
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
}

void LaunchWorkers::run_control(const std::function<void()>& control, const std::function<void()>& poll,
                                std::chrono::milliseconds every) {
  if (t_controlling == this) return control();
  std::exception_ptr error;
  std::vector<std::function<void()>> jobs(1);
  jobs[0] = [this, &control, &error] {
    t_controlling = this;
    try {
      control();
    } catch (...) {
      error = std::current_exception();
    }
    t_controlling = nullptr;
  };
  start(std::move(jobs));
  if (poll) {
    std::unique_lock lock(mutex_);
    while (!done_.wait_for(lock, every, [this] { return pending_ == 0; })) {
      lock.unlock();
      poll();
      lock.lock();
    }
  } else {
    wait();
  }
  if (error) std::rethrow_exception(error);
}

void LaunchWorkers::serve(Slot& slot) {
  boost::fibers::use_scheduling_algorithm<CycleOrderedScheduler>();
  std::unique_lock lock(mutex_);
  for (;;) {
    slot.work.wait(lock, [&] { return slot.has_job || stop_; });
    if (!slot.has_job) return;  // stopping, nothing left to do
    std::function<void()> job = std::move(slot.job);
    const bool nested = slot.nested;
    lock.unlock();
    job();
    job = nullptr;  // whatever the job held goes before the round is reported done
    lock.lock();
    slot.has_job = false;
    if (--(nested ? nested_pending_ : pending_) == 0) done_.notify_all();
  }
}

}  // namespace ldmsim::detail
