// The node-wide barrier of a launch whose core groups run together on one host thread (LaunchSpec::node_sync):
// every core of every group of the launch arrives, all leave at the latest arrival plus node_barrier_cycles.
// A fault in any group aborts them all, since cores of the others may be waiting for it here.
#pragma once

#include <boost/fiber/condition_variable.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {
class Core;
}

namespace ldmsim::detail {

class GroupRun;

class NodeSync {
 public:
  explicit NodeSync(Cycle barrier_cycles) : barrier_cycles_(barrier_cycles) {}
  void add(GroupRun& run, std::uint32_t cores) {
    runs_.push_back(&run);
    expected_ += cores;
  }
  /// Blocks `core` of `run` until every core of the launch arrived; returns the release cycle.
  Cycle barrier(GroupRun& run, Core& core);
  /// How many cores have arrived at the pending barrier, and how many it needs (for the deadlock dump).
  std::pair<std::uint32_t, std::uint32_t> progress() const { return {arrived_, expected_}; }
  /// Called when a group records a fault: every group of the launch aborts (idempotent).
  void abort_all();

 private:
  Cycle barrier_cycles_;
  std::vector<GroupRun*> runs_;
  std::uint32_t expected_ = 0;
  std::uint32_t arrived_ = 0;
  Cycle latest_arrival_ = 0;
  Cycle release_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<std::pair<GroupRun*, int>> waiting_;
  boost::fibers::condition_variable_any released_;
};

}  // namespace ldmsim::detail
