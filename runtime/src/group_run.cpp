// Execution of one core group for one launch (see group_run.hpp).
#include "group_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/fiber/context.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>

#include "ldmsim/sim/logging.hpp"
#include "scheduler.hpp"

namespace ldmsim::detail {

namespace {
const char* scope_name(Scope scope) {
  switch (scope) {
    case Scope::kGroup:
      return "group";
    case Scope::kRow:
      return "row";
    case Scope::kCol:
      return "column";
  }
  return "?";
}
}  // namespace

GroupRun::GroupRun(MachineImpl& machine, GroupState& group, const Kernel& kernel, std::string name)
    : machine_(machine), group_(group), kernel_(kernel), name_(std::move(name)), dma_log_(logger("dma")) {
  const Arch& a = machine_.arch;
  const int n = static_cast<int>(a.cores_per_group());
  start_cycle_ = group_.stats.cycles;
  states_.assign(static_cast<std::size_t>(n), State::kReady);
  barrier_notes_.assign(static_cast<std::size_t>(n), {});
  slots_.emplace_back().expected = static_cast<std::uint32_t>(n);
  for (std::uint32_t r = 0; r < a.rows; ++r) slots_.emplace_back().expected = a.cols;
  for (std::uint32_t c = 0; c < a.cols; ++c) slots_.emplace_back().expected = a.rows;
  cores_.reserve(static_cast<std::size_t>(n));
  for (int id = 0; id < n; ++id) {
    const int cols = static_cast<int>(a.cols);
    std::byte* ldm = group_.ldm.data() + static_cast<std::size_t>(id) * a.ldm_bytes;
    cores_.emplace_back(new Core(*this, group_.cg, id, id / cols, id % cols, ldm, a.ldm_bytes,
                                 group_.stats.cores[static_cast<std::size_t>(id)]));
    cores_.back()->cycle_ = start_cycle_;
  }
}

void GroupRun::run() noexcept {
  try {
    group_.trace.mark({MarkerKind::kLaunchBegin, start_cycle_, -1, 0, name_});
    live_ = static_cast<int>(cores_.size());
    std::vector<boost::fibers::fiber> fibers;
    fibers.reserve(cores_.size());
    for (std::size_t i = 0; i < cores_.size(); ++i) {
      fibers.emplace_back(std::allocator_arg, group_.stacks.slice(i), [this, i] { run_core(static_cast<int>(i)); });
    }
    // The control core has the largest key: it resumes only when no compute core is ready to run.
    while (live_ > 0) {
      boost::this_fiber::yield();
      if (live_ > 0) on_deadlock();
    }
    for (auto& fiber : fibers) fiber.join();
    Cycle end = start_cycle_;
    for (const auto& core : cores_) end = std::max(end, core->cycle_);
    group_.stats.cycles = end;
    ++group_.stats.launches;
    group_.trace.mark({MarkerKind::kLaunchEnd, end, -1, 0, name_});
  } catch (const std::exception& e) {
    record_fault(Fault(FaultKind::kKernelException, {group_.cg, -1}, start_cycle_, name_,
                       fmt::format("simulator error while running the group: {}", e.what())));
  }
}

void GroupRun::run_core(int id) noexcept {
  Core& core = *cores_[static_cast<std::size_t>(id)];
  auto& order = boost::this_fiber::properties<CoreOrder>();
  core.order_ = &order;
  const auto [low, high] = group_.stacks.bounds(static_cast<std::size_t>(id));
  core.stack_low_ = reinterpret_cast<std::uintptr_t>(low);
  core.stack_high_ = reinterpret_cast<std::uintptr_t>(high);
  core.in_kernel_ = true;
  try {
    core.sync_point();  // take this core's place in simulated-time order before running any kernel code
    if (!aborted_) {
      kernel_(core);
      core.check_exit();
    }
  } catch (const Fault& fault) {
    record_fault(fault);
  } catch (const Aborted&) {
    // another core of the group trapped; this one just unwinds
  } catch (const std::exception& e) {
    record_fault(Fault(FaultKind::kKernelException, {group_.cg, id}, core.cycle_, name_,
                       fmt::format("the kernel threw: {}", e.what())));
  } catch (...) {
    record_fault(Fault(FaultKind::kKernelException, {group_.cg, id}, core.cycle_, name_,
                       "the kernel threw an exception that is not a std::exception"));
  }
  core.in_kernel_ = false;
  auto& stats = group_.stats.cores[static_cast<std::size_t>(id)];
  stats.ldm_high_water = std::max(stats.ldm_high_water, core.ldm_.high_water());
  states_[static_cast<std::size_t>(id)] = State::kExited;
  group_.trace.mark({MarkerKind::kCoreExit, core.cycle_, id, 0, {}});
  --live_;
}

GroupRun::Slot& GroupRun::slot_for(const Core& core, Scope scope) {
  const Arch& a = machine_.arch;
  switch (scope) {
    case Scope::kGroup:
      return slots_[0];
    case Scope::kRow:
      return slots_[1 + static_cast<std::size_t>(core.row())];
    case Scope::kCol:
      return slots_[1 + a.rows + static_cast<std::size_t>(core.col())];
  }
  return slots_[0];
}

void GroupRun::barrier(Core& core, Scope scope) {
  Slot& slot = slot_for(core, scope);
  const Cycle arrival = core.cycle_;
  slot.latest_arrival = std::max(slot.latest_arrival, arrival);
  if (++slot.arrived == slot.expected) {
    slot.release = slot.latest_arrival + machine_.arch.barrier_cycles;
    ++slot.generation;
    slot.arrived = 0;
    slot.latest_arrival = 0;
    for (int waiter : slot.waiting) {
      cores_[static_cast<std::size_t>(waiter)]->order_->cycle = slot.release;  // resume in time order
      states_[static_cast<std::size_t>(waiter)] = State::kReady;
    }
    slot.waiting.clear();
    group_.trace.mark({MarkerKind::kBarrier, slot.release, core.id(), static_cast<std::uint32_t>(scope), {}});
    slot.released.notify_all();
  } else {
    const std::uint64_t generation = slot.generation;
    slot.waiting.push_back(core.id());
    states_[static_cast<std::size_t>(core.id())] = State::kAtBarrier;
    barrier_notes_[static_cast<std::size_t>(core.id())] = {scope, arrival, slot.arrived, slot.expected};
    NoLock lock;
    while (slot.generation == generation && !aborted_) slot.released.wait(lock);
    if (slot.generation == generation) throw Aborted{};
  }
  core.stats_->barrier_wait_cycles += slot.release - arrival;
  core.cycle_ = slot.release;
}

void GroupRun::record_fault(const Fault& fault) {
  auto key = [](const Fault& f) { return std::make_tuple(f.cycle(), f.core()); };
  if (!first_fault_ || key(fault) < key(*first_fault_)) first_fault_ = fault;
  group_.trace.mark(
      {MarkerKind::kFault, fault.cycle(), fault.core(), static_cast<std::uint32_t>(fault.kind()), fault.what()});
  logger("runtime")->debug("[{} {}:{}] {}", fault.cycle(), fault.cg(), fault.core(), fault.what());
  if (!aborted_) {
    aborted_ = true;
    for (auto& slot : slots_) slot.released.notify_all();
  }
}

void GroupRun::record_warning(const Core& core, const std::string& message) {
  group_.trace.mark({MarkerKind::kLintWarning, core.cycle(), core.id(), 0, message});
  dma_log_->warn("[{} {}:{}] lint: {}", core.cycle(), group_.cg, core.id(), message);
}

void GroupRun::on_deadlock() {
  if (aborted_) {
    for (auto& slot : slots_) slot.released.notify_all();
    return;
  }
  std::string dump;
  Cycle latest = start_cycle_;
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    const Core& core = *cores_[i];
    latest = std::max(latest, core.cycle_);
    std::string state;
    switch (states_[i]) {
      case State::kExited:
        state = fmt::format("exited at cycle {}", core.cycle_);
        break;
      case State::kAtBarrier: {
        const BarrierNote& b = barrier_notes_[i];
        state = fmt::format("waiting at a {} barrier since cycle {} ({} of {} arrived)", scope_name(b.scope), b.arrival,
                            b.arrived, b.expected);
        break;
      }
      case State::kReady:
        state = fmt::format("blocked at cycle {}", core.cycle_);
        break;
    }
    dump += fmt::format("\n  core {} (row {}, col {}): {}", i, core.row(), core.col(), state);
  }
  record_fault(Fault(FaultKind::kDeadlock, {group_.cg, -1}, latest, name_,
                     fmt::format("every live core of the group is blocked and none can proceed; hint: make every "
                                 "core of a barrier's scope reach it the same number of times{}",
                                 dump)));
}

}  // namespace ldmsim::detail
