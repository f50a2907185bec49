// Launch execution across host threads (see launch_state.hpp).
#include "launch_state.hpp"

#include <fmt/format.h>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/operations.hpp>

#include "check_state.hpp"
#include "context_races.hpp"
#include "context_session.hpp"
#include "scheduler.hpp"

namespace ldmsim::detail {

LaunchState::LaunchState(MachineImpl& machine, const std::vector<int>& groups, Kernel kernel, std::string name,
                         const std::vector<std::vector<int>>& sync_sets)
    : machine_(machine), kernel_(std::move(kernel)) {
  // A group's control launches on its own group only (another thread may be running the others), checked before
  // anything of a group is touched.
  if (const int own = current_group_control(); own >= 0) {
    for (const int cg : groups) {
      const int node_cg = machine_.groups[static_cast<std::size_t>(cg)]->shared.cg;
      if (node_cg != own) {
        throw std::logic_error(fmt::format(
            "launch: the control of core group {} launched on core group {}; a group's control launches only on "
            "its own group",
            own, node_cg));
      }
    }
  }
  // Without node-sync sets every group is a set of its own, with no node barrier.
  std::vector<std::vector<int>> sets = sync_sets;
  synced_ = !sync_sets.empty();
  if (sets.empty()) {
    for (int cg : groups) sets.push_back({cg});
  }
  std::vector<std::vector<GroupRun*>>& together = sets_;
  for (const auto& set : sets) {
    NodeSync* node = nullptr;
    if (!sync_sets.empty()) {
      nodes_.push_back(std::make_unique<NodeSync>(machine_.arch.node_barrier_cycles));
      node = nodes_.back().get();
    }
    together.emplace_back();
    for (int cg : set) {
      physical_.push_back(static_cast<std::size_t>(machine_.groups[static_cast<std::size_t>(cg)]->shared.cg));
      runs_.push_back(
          GroupRun::take(machine_, *machine_.groups[static_cast<std::size_t>(cg)], cg, kernel_, name, node));
      if (node != nullptr) node->add(*runs_.back(), machine_.arch.cores_per_group());
      together.back().push_back(runs_.back().get());
    }
  }
  // Other groups of the launch, other models' launches of a pipelined run, or other control cores' launches run at
  // the same time: the requests are kept for the checks between them.
  const CheckState* checking = machine_.host_state->find<CheckState>();
  const bool controls = checking != nullptr && checking->checks.races && checking->control.has_value();
  if (runs_.size() > 1 || machine_.node->session != nullptr || controls) {
    for (const auto& run : runs_) run->share_launch_with_groups();
  }
  mark_active(true);
  if (ContextSession* session = machine_.node->session) {
    start_in_session(*session);
    return;
  }
  if (machine_.workers) {
    start_on_workers();
    return;
  }
  const std::size_t threads = std::min<std::size_t>(machine_.threads, together.size());
  for (std::size_t t = 0; t < threads; ++t) {
    threads_.emplace_back([this, &state = machine_.thread_state(t)] {
      boost::fibers::use_scheduling_algorithm<CycleOrderedScheduler>();
      for (std::size_t i = next_set_++; i < sets_.size(); i = next_set_++) GroupRun::run_together(sets_[i], state);
    });
  }
}

void LaunchState::mark_active(bool active) {
  for (const std::size_t cg : physical_) (*machine_.launch_active)[cg] = active ? 1 : 0;
}

void LaunchState::start_on_workers() {
  if (const int here = LaunchWorkers::group_control_worker(machine_.workers.get()); here >= 0) {
    // A group control launches on its own group (the constructor checked), which this worker runs:
    // run_group_controls deals group g to worker g mod workers and moves its fibers there. The launch runs at
    // join(), here; fibers of another thread would be a broken invariant, never run from here.
    for (const auto& set : sets_) {
      for (GroupRun* run : set) {
        if (run->runners().home() >= 0 && run->runners().home() != here) {
          mark_active(false);
          throw std::logic_error("launch: a core group's fibers live on another host thread than its control");
        }
      }
    }
    inline_worker_ = here;
    // A worker runs the controls dealt to it one after another, each launch to its end: one group at a time.
    for (const auto& set : sets_) {
      for (GroupRun* run : set) lend_thread_stores(static_cast<std::size_t>(here), *run);
    }
    return;
  }
  // A group view's launch too goes to the worker its groups' fibers live on (a view counts the machine's workers).
  const std::size_t workers = machine_.workers->size();
  const std::size_t used = std::min<std::size_t>(workers, sets_.size());
  const std::size_t quota = (sets_.size() + used - 1) / used;
  std::vector<std::vector<std::size_t>> sets_of(workers);
  for (std::size_t s = 0; s < sets_.size(); ++s) {
    int home = sets_[s].front()->runners().home();
    for (GroupRun* run : sets_[s]) {
      if (run->runners().home() != home) home = -1;
    }
    std::size_t chosen = 0;
    if (home >= 0 && static_cast<std::size_t>(home) < workers &&
        sets_of[static_cast<std::size_t>(home)].size() < quota) {
      chosen = static_cast<std::size_t>(home);
    } else {
      for (std::size_t w = 1; w < workers; ++w) {
        if (sets_of[w].size() < sets_of[chosen].size()) chosen = w;
      }
    }
    sets_of[chosen].push_back(s);
    for (GroupRun* run : sets_[s]) {
      const int at = run->runners().home();
      if (at >= 0 && static_cast<std::size_t>(at) != chosen) run->runners().retire();
    }
  }
  for (std::size_t w = 0; w < workers; ++w) {
    for (const std::size_t s : sets_of[w]) {
      for (GroupRun* run : sets_[s]) lend_thread_stores(w, *run);
    }
  }
  std::vector<std::function<void()>> jobs(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    if (sets_of[w].empty()) continue;  // no handoff to a worker with nothing to run
    jobs[w] = [this, w, sets = std::move(sets_of[w]), &state = machine_.thread_state(w)] {
      for (const std::size_t s : sets) {
        GroupRun::run_together(sets_[s], state, machine_.workers, static_cast<int>(w));
      }
    };
  }
  on_workers_ = true;
  machine_.workers->start(std::move(jobs));
}

void LaunchState::lend_thread_stores(std::size_t worker, GroupRun& run) {
  const auto& stores = machine_.node->thread_stores;
  if (synced_ || worker >= stores.size()) return;  // groups run together keep their own
  run.use_stores(stores[worker]->data());
}

void LaunchState::start_in_session(ContextSession& session) {
  session_ = &session;
  program_ = &boost::this_fiber::properties<CoreOrder>();
  HostState& state = machine_.thread_state(0);  // every launch of the session runs on its one thread
  for (const auto& run : runs_) {
    run->start(
        [this] {
          if (--running_ > 0) return;
          Cycle end = 0;
          for (const auto& r : runs_) end = std::max(end, r->latest_cycle());
          program_->cycle = end;  // the program goes on when its launch has ended, in simulated-time order
          exited_.notify_all();
        },
        state);
  }
  for (const auto& run : runs_) running_ += run->live() ? 1u : 0u;  // no fiber has run yet
  session.add(*this);
}

bool LaunchState::declare_deadlock() {
  bool any = false;
  for (const auto& set : sets_) {
    for (GroupRun* run : set) {
      if (!run->live()) continue;
      run->on_deadlock(set);
      any = true;
    }
  }
  return any;
}

LaunchState::~LaunchState() {
  join();
}

std::optional<Fault> LaunchState::join() {
  if (joined_) return fault_;
  if (session_ != nullptr) {
    NoLock lock;
    while (running_ > 0) exited_.wait(lock);
    for (const auto& run : runs_) run->finish();
    session_->remove(*this);
  }
  if (inline_worker_ >= 0) {
    HostState& state = machine_.thread_state(static_cast<std::size_t>(inline_worker_));
    for (const auto& set : sets_) GroupRun::run_together(set, state, machine_.workers, inline_worker_);
    inline_worker_ = -1;
  }
  for (auto& thread : threads_) thread.join();
  if (on_workers_) machine_.workers->wait();
  std::vector<GroupCheck*> checks;  // every group has finished: races between them can be swept for
  for (const auto& run : runs_) {
    if (run->checks() != nullptr) checks.push_back(run->checks());
  }
  if (checks.size() > 1) sweep_across_groups(checks);
  if (!checks.empty()) finish_device_init(checks, machine_.host_state->get<CheckState>().device);
  if (!checks.empty() && machine_.node->session != nullptr && checks.front()->checks().races) {
    if (!machine_.node->context_races) {
      machine_.node->context_races = std::make_shared<ContextRaces>("models run at the same time share no barrier");
    }
    machine_.node->context_races->add_launch(machine_.context, "model " + machine_.label, checks, machine_.memory);
  } else if (!checks.empty() && checks.front()->checks().races) {
    CheckState& state = machine_.host_state->get<CheckState>();
    if (state.control) state.control_races.add_launch(state.control->id, state.control->label, checks, machine_.memory);
  }
  joined_ = true;
  for (const auto& run : runs_) {
    if (!host_error_) host_error_ = run->host_error();
    const auto& f = run->fault();
    if (!f) continue;
    auto key = [](const Fault& x) { return std::make_tuple(x.cycle(), x.cg(), x.core()); };
    if (!fault_ || key(*f) < key(*fault_)) fault_ = *f;
  }
  // Here, not at destruction: a Launch handle may outlive its machine, and with it the groups.
  sets_.clear();
  for (auto& run : runs_) GroupRun::give_back(std::move(run));
  runs_.clear();
  mark_active(false);
  return fault_;
}

}  // namespace ldmsim::detail
