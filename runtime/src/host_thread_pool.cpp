// The host threads launches run on (see host_thread_pool.hpp).
#include "host_thread_pool.hpp"

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/operations.hpp>

#include "scheduler.hpp"

namespace ldmsim::detail {

HostThreadPool::HostThreadPool(std::size_t threads) {
  threads_.reserve(std::max<std::size_t>(1, threads));
  for (std::size_t t = 0; t < std::max<std::size_t>(1, threads); ++t) threads_.emplace_back([this, t] { serve(t); });
}

HostThreadPool::~HostThreadPool() {
  wait();
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& thread : threads_) thread.join();
}

bool HostThreadPool::try_start(std::size_t count, std::function<void(std::size_t)> job) {
  {
    const std::lock_guard lock(mutex_);
    if (busy_ || count > threads_.size()) return false;
    busy_ = true;
    job_ = std::move(job);
    count_ = count;
    running_ = count;
    ++generation_;
  }
  work_.notify_all();
  return true;
}

void HostThreadPool::wait() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return running_ == 0; });
  if (busy_) {
    job_ = nullptr;  // drops what the job holds before the caller goes on
    busy_ = false;
  }
}

void HostThreadPool::serve(std::size_t index) {
  boost::fibers::use_scheduling_algorithm<CycleOrderedScheduler>();
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    if (index >= count_) continue;
    const std::function<void(std::size_t)>& job = job_;
    lock.unlock();
    job(index);  // the job's own code catches what it throws (GroupRun::run_together is noexcept)
    lock.lock();
    if (--running_ == 0) done_.notify_all();
  }
}

}  // namespace ldmsim::detail
