// A launch in flight: the group runs, the host threads executing them, and the join that gathers faults.
#pragma once

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "group_run.hpp"

namespace ldmsim::detail {

class LaunchState {
 public:
  /// Starts the host threads; group i of `groups` runs on thread i % threads (a static assignment, so the
  /// outcome never depends on the thread count).
  /// With `node_sync` every group runs on one thread, together, and Scope::kNode barriers join them.
  LaunchState(MachineImpl& machine, const std::vector<int>& groups, Kernel kernel, std::string name, bool node_sync);
  ~LaunchState();
  LaunchState(const LaunchState&) = delete;
  LaunchState& operator=(const LaunchState&) = delete;

  /// Waits for every group; returns the first fault in (cycle, cg, core) order. Idempotent.
  std::optional<Fault> join();

 private:
  MachineImpl& machine_;
  Kernel kernel_;
  std::unique_ptr<NodeSync> node_;
  std::vector<std::unique_ptr<GroupRun>> runs_;
  std::vector<std::thread> threads_;
  bool joined_ = false;
  std::optional<Fault> fault_;
};

}  // namespace ldmsim::detail
