// A core group's compute-core fibers, kept between launches. Making and joining a fiber per core per launch cost
// most of a launch's host time (384 fibers on sw26010pro); instead each core's fiber is made once, on the launch
// worker that first runs its group, and parks between launches. A launch hands each parked fiber its GroupRun and
// makes it ready in the same order fresh fibers would be, so nothing simulated changes. Fibers belong to the host
// thread that made them: a group whose next launch runs on another worker has its fibers retired first (joined on
// their own worker) and made anew there.
#pragma once

#include <boost/fiber/context.hpp>
#include <boost/fiber/fiber.hpp>
#include <cstddef>
#include <memory>
#include <vector>

#include "ldmsim/sim/types.hpp"
#include "stack_pool.hpp"

namespace ldmsim::detail {

class GroupRun;
class LaunchWorkers;

class CoreRunners {
 public:
  CoreRunners(StackPool& stacks, std::size_t cores) : stacks_(stacks), slots_(cores) {}
  /// Retires the fibers on their worker (from the control thread).
  ~CoreRunners();
  CoreRunners(const CoreRunners&) = delete;
  CoreRunners& operator=(const CoreRunners&) = delete;

  /// The launch worker the fibers live on; -1 when there are none.
  int home() const { return home_; }
  /// On worker `worker`'s thread (which must be home() or, with no fibers, any): makes the fibers if there are
  /// none. `workers` is kept so the destructor can reach the worker.
  void ensure(int worker, const std::shared_ptr<LaunchWorkers>& workers);
  /// On the home worker's thread: core `id` runs `run` next; its fiber becomes ready with the scheduler key
  /// (`cycle`, `key`), the place in time order its first sync point would give it. A fiber made for this launch
  /// is ready already, FIFO, and takes that place at its sync point.
  void assign(std::size_t id, GroupRun& run, Cycle cycle, std::uint32_t key);
  /// From the control thread, no launch in flight: joins the fibers on their worker; home() is -1 after.
  void retire();

 private:
  struct Slot {
    GroupRun* run = nullptr;  // what to run next; null: park
    boost::fibers::context* ctx = nullptr;
    bool parked = false;
  };
  void loop(std::size_t id);
  void retire_here();

  StackPool& stacks_;
  std::vector<Slot> slots_;
  std::vector<boost::fibers::fiber> fibers_;
  std::shared_ptr<LaunchWorkers> workers_;
  int home_ = -1;
  bool stop_ = false;
};

}  // namespace ldmsim::detail
