// Machine::run_group_controls: the control cores of several core groups at once, one per launch worker (see
// machine.hpp and docs/architecture.md, "Host threads").
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "check_state.hpp"
#include "launch_state.hpp"
#include "lint_state.hpp"
#include "machine_impl.hpp"

namespace ldmsim {

namespace {

/// The node group whose control this thread runs (detail::current_group_control).
thread_local int t_group_control = -1;
/// Launches the control this thread runs has made (detail::note_group_control_launch).
thread_local std::vector<std::weak_ptr<detail::LaunchState>> t_control_launches;

/// Joins the launches the control left unjoined, whose handles it moved elsewhere: a launch made in a control runs
/// on the control's thread, where its group's fibers live, so it cannot be run later from another. Their faults
/// stay with their handles.
void join_left_launches() {
  for (const auto& made : std::exchange(t_control_launches, {})) {
    if (const auto launch = made.lock()) launch->join();
  }
}

/// Marks this thread as running group `cg`'s control for as long as it lives.
class GroupControlScope {
 public:
  explicit GroupControlScope(int cg) : outer_(std::exchange(t_group_control, cg)) {}
  ~GroupControlScope() { t_group_control = outer_; }
  GroupControlScope(const GroupControlScope&) = delete;
  GroupControlScope& operator=(const GroupControlScope&) = delete;

 private:
  int outer_;
};

/// Concurrent mode of the memory for as long as the controls run.
class ConcurrentMemory {
 public:
  explicit ConcurrentMemory(MainMemory& memory) : memory_(memory) { memory_.set_concurrent(true); }
  ~ConcurrentMemory() { memory_.set_concurrent(false); }
  ConcurrentMemory(const ConcurrentMemory&) = delete;
  ConcurrentMemory& operator=(const ConcurrentMemory&) = delete;

 private:
  MainMemory& memory_;
};

}  // namespace

int detail::current_group_control() {
  return t_group_control;
}

void detail::note_group_control_launch(const std::shared_ptr<LaunchState>& launch) {
  std::erase_if(t_control_launches, [](const auto& made) { return made.expired(); });
  t_control_launches.push_back(launch);
}

void Machine::run_group_controls(const std::vector<int>& groups, std::vector<std::function<void()>> controls) {
  detail::MachineImpl& impl = *impl_;
  if (detail::current_group_control() >= 0) {
    throw std::logic_error("run_group_controls: called from a core group's control (they do not nest)");
  }
  impl.require_idle("run_group_controls");
  if (groups.size() != controls.size()) {
    throw std::invalid_argument(
        fmt::format("run_group_controls: {} groups for {} controls", groups.size(), controls.size()));
  }
  std::vector<int> physical;
  for (const int cg : groups) physical.push_back(impl.physical_group(cg));
  std::vector<int> sorted = physical;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw ConfigError("run_group_controls: a core group is listed twice");
  }
  std::vector<std::exception_ptr> errors(controls.size());
  const auto run = [&](std::size_t i) {
    try {
      const GroupControlScope scope(physical[i]);
      try {
        controls[i]();
      } catch (...) {
        join_left_launches();
        throw;
      }
      join_left_launches();
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  const auto* checks = impl.host_state->find<detail::CheckState>();
  const std::size_t workers = impl.workers ? impl.workers->size() : 1;
  if (workers < 2 || controls.size() < 2 || (checks != nullptr && checks->checks.any())) {
    for (std::size_t i = 0; i < controls.size(); ++i) run(i);
  } else {
    // Group g's control runs on worker g mod workers, as a launch of the whole machine deals the groups out, so
    // its fibers stay where they are from op to op; fibers living elsewhere are retired first (they belong to the
    // thread that made them).
    std::vector<std::vector<std::size_t>> mine(workers);
    for (std::size_t i = 0; i < controls.size(); ++i) {
      const std::size_t w = static_cast<std::size_t>(physical[i]) % workers;
      mine[w].push_back(i);
      detail::CoreRunners& runners = impl.groups[static_cast<std::size_t>(groups[i])]->runners;
      if (runners.home() >= 0 && static_cast<std::size_t>(runners.home()) != w) runners.retire();
      // Made here: the launches look them up from their workers' threads.
      impl.host_state->get<detail::LintState>().groups[physical[i]];
    }
    impl.thread_state(workers - 1);
    std::vector<std::function<void()>> jobs(workers);
    for (std::size_t w = 0; w < workers; ++w) {
      if (mine[w].empty()) continue;
      jobs[w] = [&run, &mine, w] {
        for (const std::size_t i : mine[w]) run(i);
      };
    }
    const ConcurrentMemory concurrent(impl.memory);
    impl.workers->run_group_controls(std::move(jobs));
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace ldmsim
