// The launches in flight while ConcurrentMachine::run runs several contexts' programs as fibers of one host
// thread. When no fiber of that thread can run, every launch with live cores is deadlocked: the session declares
// it, so a stuck model ends in a fault instead of a hang.
#pragma once

#include <vector>

namespace ldmsim::detail {

class LaunchState;

class ContextSession {
 public:
  void add(LaunchState& launch) { launches_.push_back(&launch); }
  void remove(LaunchState& launch);
  /// Declares a deadlock in every launch with live cores; false when there was none.
  bool declare_deadlocks();

 private:
  std::vector<LaunchState*> launches_;
};

}  // namespace ldmsim::detail
