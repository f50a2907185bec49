// Persistent launch threads (see launch_workers.hpp).
#include "launch_workers.hpp"

#include <boost/fiber/operations.hpp>
#include <exception>
#include <stdexcept>
#include <utility>

#include "scheduler.hpp"

namespace ldmsim::detail {

namespace {

/// The workers whose control core this thread (their worker 0) is running, if any.
thread_local const LaunchWorkers* t_controlling = nullptr;

/// The workers (and which of them) whose group control this thread runs (LaunchWorkers::run_group_controls).
struct GroupControl {
  const LaunchWorkers* workers = nullptr;
  int worker = -1;
};
thread_local GroupControl t_group_control;

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
  // A job given to a worker that has one would be lost, and its round would never end.
  for (std::size_t w = 0; w < jobs.size() && w < slots_.size(); ++w) {
    if (jobs[w] && ((nested && w == 0) ? static_cast<bool>(inline_job_) : slots_[w].has_job)) {
      throw std::logic_error("launch workers: a round was started before the previous one was waited for");
    }
  }
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
    nested_done_.wait(lock, [this] { return nested_pending_ == 0; });
    return;
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
}

void LaunchWorkers::run_control(const std::function<void()>& control, const std::function<void()>& poll,
                                std::chrono::milliseconds every) {
  if (t_controlling == this || group_control_worker(this) >= 0) return control();
  std::exception_ptr error, poll_error;
  std::vector<std::function<void()>> jobs(1);
  jobs[0] = [this, &control, &error] {
    t_controlling = this;
    try {
      control();
    } catch (...) {
      error = std::current_exception();
    }
    // A round `control` started and did not wait for (a launch it did not join) ends here, not on another thread.
    wait();
    t_controlling = nullptr;
  };
  start(std::move(jobs));
  if (poll) {
    std::unique_lock lock(mutex_);
    while (!done_.wait_for(lock, every, [this] { return pending_ == 0; })) {
      lock.unlock();
      try {
        poll();
      } catch (...) {  // the control still runs on what this frame holds: wait for it, then throw
        poll_error = std::current_exception();
        lock.lock();
        break;
      }
      lock.lock();
    }
    done_.wait(lock, [this] { return pending_ == 0; });
  } else {
    wait();
  }
  if (error) std::rethrow_exception(error);
  if (poll_error) std::rethrow_exception(poll_error);
}

void LaunchWorkers::run_group_controls(std::vector<std::function<void()>> jobs) {
  for (std::size_t w = 0; w < jobs.size(); ++w) {
    if (!jobs[w]) continue;
    jobs[w] = [this, w, job = std::move(jobs[w])] {
      const GroupControl outer = std::exchange(t_group_control, GroupControl{this, static_cast<int>(w)});
      job();
      t_group_control = outer;
    };
  }
  run(std::move(jobs));
}

int LaunchWorkers::group_control_worker(const LaunchWorkers* workers) {
  return t_group_control.workers == workers && workers != nullptr ? t_group_control.worker : -1;
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
    if (nested) {
      if (--nested_pending_ == 0) nested_done_.notify_all();
    } else if (--pending_ == 0) {
      done_.notify_all();
    }
  }
}

}  // namespace ldmsim::detail
