// Several models' contexts on one node (see concurrent.hpp).
#include "ldmsim/runtime/concurrent.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/protected_fixedsize_stack.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "context_races.hpp"
#include "context_session.hpp"
#include "ldmsim/sim/logging.hpp"
#include "machine_impl.hpp"
#include "node_link.hpp"
#include "scheduler.hpp"

namespace ldmsim {

namespace {
constexpr std::size_t kMaxContexts = 64;
constexpr std::uint64_t kShareGranule = 1024;
// A program runs the host side of a model (graph executor, op planners, staging) on a fiber: give it a thread's
// worth of stack (committed only when touched).
constexpr std::size_t kProgramStackBytes = std::size_t{8} << 20;
}  // namespace

std::uint64_t ConcurrentMachine::ldm_share(const Arch& arch, std::size_t contexts) {
  if (contexts == 1) return arch.ldm_bytes;
  const std::uint64_t share = arch.ldm_bytes / contexts / kShareGranule * kShareGranule;
  if (share < kShareGranule) {
    throw ConfigError(
        fmt::format("{} contexts leave each a share of under {} bytes of the {}-byte ldm of arch '{}'; "
                    "at most {} contexts fit",
                    contexts, kShareGranule, arch.ldm_bytes, arch.name, arch.ldm_bytes / kShareGranule));
  }
  return share;
}

ConcurrentMachine::ConcurrentMachine(Arch arch, std::vector<std::string> context_names, MachineOptions options)
    : names_(std::move(context_names)) {
  if (names_.empty()) throw ConfigError("a ConcurrentMachine needs at least one context");
  if (names_.size() > kMaxContexts) {
    throw ConfigError(fmt::format("{} contexts: at most {} models can share a machine", names_.size(), kMaxContexts));
  }
  std::set<std::string> seen;
  for (const auto& name : names_) {
    if (name.empty()) throw ConfigError("a context's name is empty");
    if (!seen.insert(name).second) throw ConfigError(fmt::format("two contexts are named '{}'", name));
  }
  Arch view = arch;
  view.ldm_bytes = ldm_share(arch, names_.size());
  const auto count = static_cast<std::uint32_t>(names_.size());
  node_ = std::make_shared<detail::NodeState>(std::move(arch), std::move(options), count);
  for (std::uint32_t k = 0; k < count; ++k) {
    // One context alone keeps plain launch names, so its trace is the one a plain Machine writes.
    std::string label = count > 1 ? names_[k] : std::string();
    contexts_.push_back(
        std::unique_ptr<Machine>(new Machine(std::make_unique<detail::MachineImpl>(node_, view, k, std::move(label)))));
    contexts_.back()->host_state<detail::NodeLink>().node = node_.get();  // for dma_waits (schedule_waits.hpp)
  }
}

ConcurrentMachine::~ConcurrentMachine() = default;

const Arch& ConcurrentMachine::arch() const {
  return node_->arch;
}

std::vector<std::exception_ptr> ConcurrentMachine::run(const std::vector<std::function<void(Machine&)>>& programs,
                                                       ContextSchedule schedule) {
  if (programs.size() != contexts_.size()) {
    throw ConfigError(fmt::format("{} programs for {} contexts", programs.size(), contexts_.size()));
  }
  if (node_->session != nullptr) throw std::logic_error("ConcurrentMachine::run called while it runs");
  std::vector<std::exception_ptr> outcome(programs.size());
  const auto run_program = [&](std::size_t k) {
    try {
      programs[k](*contexts_[k]);
    } catch (...) {
      outcome[k] = std::current_exception();
    }
    // A launch the program left unjoined ends with it (its Launch handle keeps the fault): nothing of a program
    // runs after run() returns.
    contexts_[k]->impl_->join_active_launch();
  };
  if (schedule == ContextSchedule::kSequential || programs.size() == 1) {
    // Nothing to interleave: each program runs on this thread with plain launches (host threads per group).
    for (std::size_t k = 0; k < programs.size(); ++k) {
      const Cycle start = stats().makespan;  // the previous programs are done: start after them
      for (auto& group : contexts_[k]->impl_->groups) group->stats.cycles = std::max(group->stats.cycles, start);
      node_->sequential_context = static_cast<int>(k);
      run_program(k);
    }
    node_->sequential_context = -1;
    return outcome;
  }

  // Pipelined: every program is a fiber of one host thread, its launches' cores fibers beside it, all in
  // simulated-time order.
  detail::ContextSession session;
  node_->session = &session;
  node_->context_races.reset();  // an earlier run's programs are ordered before these
  std::thread host([&] {
    boost::fibers::use_scheduling_algorithm<detail::CycleOrderedScheduler>();
    std::size_t live = programs.size();
    std::vector<boost::fibers::fiber> fibers;
    for (std::size_t k = 0; k < programs.size(); ++k) {
      fibers.emplace_back(std::allocator_arg, boost::fibers::protected_fixedsize_stack(kProgramStackBytes), [&, k] {
        auto& order = boost::this_fiber::properties<detail::CoreOrder>();
        order.id = detail::kProgramKeyBase + static_cast<std::uint32_t>(k);
        order.cycle = contexts_[k]->stats().cycles;
        run_program(k);
        --live;
      });
    }
    // The control fiber resumes only when no core and no program can run.
    while (live > 0) {
      boost::this_fiber::yield();
      if (live > 0 && !session.declare_deadlocks()) {
        logger("runtime")->critical("a model's program is blocked outside any launch; nothing can wake it");
        std::terminate();
      }
    }
    for (auto& fiber : fibers) fiber.join();
  });
  host.join();
  node_->session = nullptr;
  return outcome;
}

ConcurrentStats ConcurrentMachine::stats() const {
  ConcurrentStats out;
  const Arch& a = node_->arch;
  out.groups.assign(a.core_groups, std::vector<SharedCoreStats>(a.cores_per_group()));
  for (std::size_t g = 0; g < node_->groups.size(); ++g) {  // switches (none recorded when one context runs)
    const auto& physical = node_->groups[g]->cores;
    for (std::size_t c = 0; c < physical.size(); ++c) out.groups[g][c] = physical[c].stats();
  }
  for (const auto& context : contexts_) {
    Cycle end = 0;
    for (std::size_t g = 0; g < context->impl_->groups.size(); ++g) {
      const GroupStats& group = context->impl_->groups[g]->stats;
      end = std::max(end, group.cycles);
      for (std::size_t c = 0; c < group.cores.size(); ++c) out.groups[g][c].busy_cycles += group.cores[c].busy_cycles;
    }
    out.context_end.push_back(end);
    out.makespan = std::max(out.makespan, end);
  }
  return out;
}

std::vector<std::vector<std::vector<ScheduleSpan>>> ConcurrentMachine::schedule() const {
  std::vector<std::vector<std::vector<ScheduleSpan>>> out;
  for (const auto& group : node_->groups) {
    auto& cores = out.emplace_back();
    for (const auto& core : group->cores) cores.push_back(core.spans());
  }
  return out;
}

void ConcurrentMachine::write_trace(const std::filesystem::path& file, const nlohmann::json& run_info) const {
  if (node_->session != nullptr) throw std::logic_error("ConcurrentMachine::write_trace while its programs run");
  detail::write_node_trace(*node_, file, run_info, stats().makespan);
}

namespace {
/// `field` of every core, combined by `combine` (a sum or a maximum).
template <typename Combine>
std::uint64_t over_cores(const std::vector<std::vector<SharedCoreStats>>& groups, std::uint64_t SharedCoreStats::*field,
                         Combine combine) {
  std::uint64_t n = 0;
  for (const auto& group : groups)
    for (const auto& core : group) n = combine(n, core.*field);
  return n;
}
const auto kSum = [](std::uint64_t a, std::uint64_t b) { return a + b; };
}  // namespace

Cycle ConcurrentStats::busy_cycles() const {
  return over_cores(groups, &SharedCoreStats::busy_cycles, kSum);
}

Cycle ConcurrentStats::switch_cycles() const {
  return over_cores(groups, &SharedCoreStats::switch_cycles, kSum);
}

std::uint64_t ConcurrentStats::switches() const {
  return over_cores(groups, &SharedCoreStats::switches, kSum);
}

std::uint64_t ConcurrentStats::schedule_compactions() const {
  return over_cores(groups, &SharedCoreStats::schedule_compactions,
                    [](std::uint64_t a, std::uint64_t b) { return std::max(a, b); });
}

Cycle ConcurrentStats::idle_core_cycles() const {
  Cycle cores = 0;
  for (const auto& group : groups) cores += group.size();
  const Cycle total = makespan * cores;
  const Cycle used = busy_cycles() + switch_cycles();
  return total > used ? total - used : 0;
}

nlohmann::json ConcurrentStats::to_json() const {
  return {{"makespan_cycles", makespan},
          {"busy_core_cycles", busy_cycles()},
          {"idle_core_cycles", idle_core_cycles()},
          {"switch_cycles", switch_cycles()},
          {"switches", switches()},
          {"context_end_cycles", context_end},
          {"schedule_compactions", schedule_compactions()}};
}

}  // namespace ldmsim
