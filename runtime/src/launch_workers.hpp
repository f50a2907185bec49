// The host threads that run a machine's launches. They live as long as the machine (and its group views), so a
// launch neither starts a thread nor sets up a fiber scheduler: each worker installs the cycle-ordered scheduler
// once and then waits for jobs. A group's core fibers, once made on a worker, stay there (core_runners.hpp).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ldmsim::detail {

class LaunchWorkers {
 public:
  /// Up to `count` workers, started on first use.
  explicit LaunchWorkers(unsigned count) : slots_(count) {}
  ~LaunchWorkers();
  LaunchWorkers(const LaunchWorkers&) = delete;
  LaunchWorkers& operator=(const LaunchWorkers&) = delete;

  unsigned size() const { return static_cast<unsigned>(slots_.size()); }
  /// Hands jobs[w] to worker w (an empty function: none) and returns at once. The previous round must have been
  /// waited for. Jobs must not throw.
  void start(std::vector<std::function<void()>> jobs);
  /// Blocks until every job of the round has returned.
  void wait();
  /// start + wait.
  void run(std::vector<std::function<void()>> jobs) {
    start(std::move(jobs));
    wait();
  }

 private:
  struct Slot {
    std::thread thread;
    std::function<void()> job;
    bool has_job = false;
    std::condition_variable work;
  };
  void serve(Slot& slot);

  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::size_t pending_ = 0;
  bool stop_ = false;
};

}  // namespace ldmsim::detail
