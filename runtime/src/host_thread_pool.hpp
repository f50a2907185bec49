// Private: the host threads a node's launches run on, kept from one launch to the next. A fresh thread per launch
// cost its creation, a Boost.Fiber scheduler, and per-thread state Boost.Fiber builds on first use (a seeded
// random generator for its spinlocks): about as much as the launch of a small operator itself.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ldmsim::detail {

class HostThreadPool {
 public:
  /// Starts `threads` threads (at least 1), each with the cycle-ordered fiber scheduler installed.
  explicit HostThreadPool(std::size_t threads);
  /// Waits for the job in flight, then stops and joins the threads.
  ~HostThreadPool();
  HostThreadPool(const HostThreadPool&) = delete;
  HostThreadPool& operator=(const HostThreadPool&) = delete;

  std::size_t size() const { return threads_.size(); }
  /// Starts job(t) on threads t = 0 .. count - 1 (count <= size()) and returns. False (nothing started) while
  /// another job runs: the caller runs it on threads of its own.
  bool try_start(std::size_t count, std::function<void(std::size_t)> job);
  /// Blocks until the started job has ended on every thread it runs on.
  void wait();

 private:
  void serve(std::size_t index);

  std::mutex mutex_;
  std::condition_variable work_;  // a job was started, or the pool stops
  std::condition_variable done_;  // a thread ended its part
  std::function<void(std::size_t)> job_;
  std::size_t count_ = 0;         // threads the job runs on
  std::size_t running_ = 0;       // of them, still running it
  std::uint64_t generation_ = 0;  // bumped per job, so a thread runs each job once
  bool busy_ = false;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ldmsim::detail
