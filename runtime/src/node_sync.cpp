// Node-wide barrier across the core groups of one launch (see node_sync.hpp).
#include "node_sync.hpp"

#include <algorithm>

#include "group_run.hpp"
#include "scheduler.hpp"

namespace ldmsim::detail {

Cycle NodeSync::barrier(GroupRun& run, Core& core) {
  const Cycle arrival = core.cycle();
  latest_arrival_ = std::max(latest_arrival_, arrival);
  if (++arrived_ == expected_) {
    release_ = latest_arrival_ + barrier_cycles_;
    ++generation_;
    arrived_ = 0;
    latest_arrival_ = 0;
    for (auto [waiter_run, id] : waiting_) waiter_run->wake_from_node_barrier(id, release_);
    for (GroupRun* r : runs_) r->mark_node_barrier(release_);
    waiting_.clear();
    released_.notify_all();
    return release_;
  }
  const std::uint64_t generation = generation_;
  waiting_.emplace_back(&run, core.id());
  NoLock lock;
  while (generation_ == generation && !run.aborted()) released_.wait(lock);
  if (generation_ == generation) throw Aborted{};
  return release_;
}

void NodeSync::abort_all() {
  for (GroupRun* run : runs_) run->abort();
  released_.notify_all();
}

}  // namespace ldmsim::detail
