// A launch in flight: the group runs, the host threads executing them, and the join that gathers faults.
#pragma once

#include <atomic>
#include <boost/fiber/condition_variable.hpp>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "group_run.hpp"

namespace ldmsim::detail {

class ContextSession;
class CoreOrder;

class LaunchState {
 public:
  /// Starts the host threads. Each set of `sync_sets` (groups of the launch) runs on one thread, together, and
  /// Scope::kNode barriers join the groups of a set. Empty: every group is a set of its own, no node barriers.
  /// A thread takes the next set not yet taken whenever it finishes one (sets differ in host time, and so can the
  /// host's CPUs). Cycles, traces and faults never depend on which thread runs a set: each set has its own engines,
  /// clocks and recorders (data a kernel shares between groups through main memory is its author's race, as on
  /// hardware and as with any thread count).
  LaunchState(MachineImpl& machine, const std::vector<int>& groups, Kernel kernel, std::string name,
              const std::vector<std::vector<int>>& sync_sets);
  ~LaunchState();
  LaunchState(const LaunchState&) = delete;
  LaunchState& operator=(const LaunchState&) = delete;

  /// Waits for every group; returns the first fault in (cycle, cg, core) order. Idempotent.
  std::optional<Fault> join();
  /// After join(): a group's host error (a trace spill that failed), null if none.
  const std::exception_ptr& host_error() const { return host_error_; }
  /// In a ContextSession, when no fiber of its thread can run: declares a deadlock in each set with live cores.
  /// Returns whether there was one.
  bool declare_deadlock();

 private:
  /// On a shared node during ConcurrentMachine::run: the cores become fibers of the calling program's thread,
  /// and join() blocks the program's fiber until they have all exited.
  void start_in_session(ContextSession& session);
  /// On the machine's launch workers (a node of one context): each set goes to a worker, preferring the one its
  /// groups' kept fibers live on, at most ceil(sets / workers) sets each; groups whose fibers live elsewhere have
  /// them retired first.
  void start_on_workers();
  /// Sets or clears the launch's groups in the machine's launch flags.
  void mark_active(bool active);
  /// Lends launch worker `worker`'s local stores (NodeState::thread_stores) to `run`, one of the groups it runs one
  /// after another, unless the launch runs groups together.
  void lend_thread_stores(std::size_t worker, GroupRun& run);

  MachineImpl& machine_;
  Kernel kernel_;
  std::vector<std::unique_ptr<NodeSync>> nodes_;  // one per set
  std::vector<std::unique_ptr<GroupRun>> runs_;
  std::vector<std::vector<GroupRun*>> sets_;  // run together, one set per host thread (or all in the session's)
  std::vector<std::thread> threads_;          // a node of several contexts, outside a session
  std::atomic<std::size_t> next_set_{0};      // the next set a host thread takes
  bool on_workers_ = false;
  bool synced_ = false;  // groups run together (node sync): each keeps its own local stores
  /// A group control's launch (LaunchWorkers::run_group_controls): its sets run at join(), on this worker's thread.
  int inline_worker_ = -1;
  std::vector<std::size_t> physical_;  // the node groups the launch runs on
  ContextSession* session_ = nullptr;
  CoreOrder* program_ = nullptr;  // the ordering key of the program's fiber that joins
  std::size_t running_ = 0;       // groups with live cores (session)
  boost::fibers::condition_variable_any exited_;
  bool joined_ = false;
  std::optional<Fault> fault_;
  std::exception_ptr host_error_;  // the first group's host error (GroupRun::host_error), rethrown by Launch::join
};

}  // namespace ldmsim::detail
