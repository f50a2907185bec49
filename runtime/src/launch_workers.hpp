// The host threads that run a machine's launches. They live as long as the machine (and its group views), so a
// launch neither starts a thread nor sets up a fiber scheduler: each worker installs the cycle-ordered scheduler
// once and then waits for jobs. A group's core fibers, once made on a worker, stay there (core_runners.hpp).
// The control core may run on worker 0 (run_control): its launches then run worker 0's share on the spot, with no
// handoff between host threads, which cost more than an empty launch's own work on a virtual machine.
#pragma once

#include <chrono>
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
  /// waited for (std::logic_error otherwise, nothing handed). Jobs must not throw.
  void start(std::vector<std::function<void()>> jobs);
  /// Blocks until every job of the round has returned.
  void wait();
  /// start + wait.
  void run(std::vector<std::function<void()>> jobs) {
    start(std::move(jobs));
    wait();
  }
  /// Runs `control` on worker 0's thread and returns when it has returned, throwing what it threw. While it runs,
  /// a round it starts gives worker 0's job to no thread: its wait() runs that job right there, then waits for the
  /// other workers; a round it leaves unwaited is waited for when it returns. `poll`, when given, runs on the
  /// calling thread about every `every` meanwhile; what it throws is thrown once `control` has returned (after what
  /// `control` threw, which wins), and it is not polled again. From worker 0's thread (a nested call) `control`
  /// just runs, as it does from a group control (run_group_controls). Not from another worker.
  void run_control(const std::function<void()>& control, const std::function<void()>& poll,
                   std::chrono::milliseconds every);
  /// Runs jobs[w] on worker w, all at once, and returns when every one has returned (a round, as run() starts).
  /// While a job runs, its thread is worker w's group control (group_control_worker): the launches it makes run
  /// there, on the spot. Jobs must not throw.
  void run_group_controls(std::vector<std::function<void()>> jobs);
  /// The worker of `workers` whose group control this thread runs, or -1 when it runs none.
  static int group_control_worker(const LaunchWorkers* workers);

 private:
  struct Slot {
    std::thread thread;
    std::function<void()> job;
    bool has_job = false;
    bool nested = false;  ///< the job is of a round the control started on worker 0
    std::condition_variable work;
  };
  void serve(Slot& slot);

  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable done_;         ///< the round started from outside ended
  std::condition_variable nested_done_;  ///< the control's round ended on the other workers
  std::size_t pending_ = 0;              ///< jobs of the round started from outside
  std::size_t nested_pending_ = 0;       ///< jobs on other workers of the round the control started
  std::function<void()> inline_job_;     ///< worker 0's job of the control's round: run by its wait()
  bool stop_ = false;
};

}  // namespace ldmsim::detail
