// Execution of one core group for one launch (see group_run.hpp).
#include "group_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/fiber/context.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "code_site.hpp"
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
    case Scope::kNode:
      return "node";
  }
  return "?";
}
}  // namespace

GroupRun::GroupRun(MachineImpl& machine, GroupContext& group, int cg_seen, const Kernel& kernel, std::string name,
                   NodeSync* node)
    : machine_(&machine), group_(group), kernel_(&kernel), cores_(machine.arch.cores_per_group()) {
  const Arch& a = machine.arch;
  slots_.emplace_back().expected = static_cast<std::uint32_t>(a.cores_per_group());
  for (std::uint32_t r = 0; r < a.rows; ++r) slots_.emplace_back().expected = a.cols;
  for (std::uint32_t c = 0; c < a.cols; ++c) slots_.emplace_back().expected = a.rows;
  begin(machine, cg_seen, kernel, std::move(name), node);
}

std::unique_ptr<GroupRun> GroupRun::take(MachineImpl& machine, GroupContext& group, int cg, const Kernel& kernel,
                                         std::string name, NodeSync* node) {
  std::unique_ptr<GroupRun> run = std::move(group.spare_run);
  const Arch& a = machine.arch;
  // A spare fits when its group's shape is the launching machine's (a shared node's contexts and views share it).
  if (!run || run->cores_.capacity() != a.cores_per_group() || run->slots_.size() != 1 + a.rows + a.cols ||
      run->slots_[1].expected != a.cols) {
    return std::make_unique<GroupRun>(machine, group, cg, kernel, std::move(name), node);
  }
  run->begin(machine, cg, kernel, std::move(name), node);
  return run;
}

void GroupRun::give_back(std::unique_ptr<GroupRun> run) {
  GroupContext& group = run->group_;
  run->cores_.clear();  // a core refers to the launch's kernel and host state: none outlives its launch
  // Nothing of the launch stays reachable from the spare (the machine may be a view that goes away).
  run->machine_ = nullptr;
  run->kernel_ = nullptr;
  run->node_ = nullptr;
  run->on_exit_ = nullptr;
  run->check_state_ = nullptr;
  run->checks_ = nullptr;
  run->lint_ = nullptr;
  group.spare_run = std::move(run);
}

void GroupRun::begin(MachineImpl& machine, int cg_seen, const Kernel& kernel, std::string name, NodeSync* node) {
  machine_ = &machine;
  kernel_ = &kernel;
  name_ = machine.launch_name(name);
  node_ = node;
  with_groups_ = false;
  dma_log_ = logger("dma");
  const Arch& a = machine.arch;
  const int n = static_cast<int>(a.cores_per_group());
  dma_channels_ = a.dma.channels();
  start_cycle_ = group_.stats.cycles;
  check_state_ = nullptr;
  checks_ = nullptr;
  node_passes_.clear();
  node_sweeps_ = 0;
  if (auto* checks = machine.host_state->find<CheckState>(); checks != nullptr && checks->checks.any()) {
    check_state_ = checks;
    checks_ = &checks->group(group_.shared.cg, machine.arch, machine.memory);
    node_passes_.assign(static_cast<std::size_t>(n), 0);
  }
  lint_ = &machine.host_state->get<LintState>().groups[group_.shared.cg];
  states_.assign(static_cast<std::size_t>(n), State::kReady);
  barrier_notes_.assign(static_cast<std::size_t>(n), {});
  reg_notes_.assign(static_cast<std::size_t>(n), {});
  reg_queues_.reset();
  reg_queue_count_ = static_cast<std::size_t>(2 * n);
  condition_notes_.assign(static_cast<std::size_t>(n), {});
  for (Slot& slot : slots_) {
    slot.arrived = 0;
    slot.latest_arrival = 0;
    slot.release = 0;
    slot.generation = 0;
    slot.waiting.clear();
  }
  live_ = 0;
  on_exit_ = nullptr;
  aborted_ = false;
  first_fault_.reset();
  host_error_ = nullptr;
  const std::uint64_t physical_ldm = machine.node->arch.ldm_bytes;
  const std::uint64_t window = machine.ldm_window().offset;
  // Scheduler keys unique on the host thread: the groups of a node-synchronised launch, and every context of a
  // shared node, run as fibers of one thread.
  const std::uint32_t key_base = (machine.context * machine.node->arch.core_groups + static_cast<std::uint32_t>(cg())) *
                                 static_cast<std::uint32_t>(n);
  cores_.clear();
  stores_ = group_.shared.ldm.data();
  engine().use_stores(stores_);
  for (int id = 0; id < n; ++id) {
    const int cols = static_cast<int>(a.cols);
    std::byte* ldm = stores_ + static_cast<std::size_t>(id) * physical_ldm + window;
    Core& core = cores_.add(new (cores_.next()) Core(*this, cg_seen, group_.shared.cg, id, id / cols, id % cols, ldm,
                                                     a.ldm_bytes, group_.stats.cores[static_cast<std::size_t>(id)]));
    core.cycle_ = start_cycle_;
    core.order_id_ = key_base + static_cast<std::uint32_t>(id);
    if (!group_.shared.cores.empty()) core.physical_ = &group_.shared.cores[static_cast<std::size_t>(id)];
  }
}

void GroupRun::use_stores(std::byte* stores) {
  stores_ = stores;
  engine().use_stores(stores_);
  const std::uint64_t physical_ldm = machine_->node->arch.ldm_bytes;
  const std::uint64_t window = machine_->ldm_window().offset;
  for (std::size_t id = 0; id < cores_.size(); ++id) cores_[id]->use_ldm(stores_ + id * physical_ldm + window);
}

template <typename Step>
void GroupRun::guarded(Step&& step) noexcept {
  try {
    step();
  } catch (const TraceSpillError&) {
    record_host_error();
  } catch (const std::exception& e) {
    record_fault(Fault(FaultKind::kKernelException, {group_.shared.cg, -1}, start_cycle_, name_,
                       fmt::format("simulator error while running the group: {}", e.what())));
  }
}

void GroupRun::run_together(const std::vector<GroupRun*>& runs, HostState& host_state,
                            const std::shared_ptr<LaunchWorkers>& workers, int worker) noexcept {
  for (GroupRun* run : runs) run->start({}, host_state, workers, worker);
  const auto live = [&runs] {
    return std::any_of(runs.begin(), runs.end(), [](const GroupRun* r) { return r->live(); });
  };
  // The control core has the largest key: it resumes only when no compute core is ready to run.
  while (live()) {
    boost::this_fiber::yield();
    for (GroupRun* run : runs) {
      if (run->live()) run->on_deadlock(runs);
    }
  }
  for (GroupRun* run : runs) run->finish();
}

void GroupRun::start(std::function<void()> on_exit, HostState& host_state,
                     const std::shared_ptr<LaunchWorkers>& workers, int worker) noexcept {
  on_exit_ = std::move(on_exit);
  for (const auto& core : cores_) core->group_state_ = &host_state;
  host_state.get<CheckLink>().state = check_state_;
  if (checks_ != nullptr) {
    std::vector<const std::byte*> ldm;
    std::vector<const Cycle*> clocks;
    for (const auto& core : cores_) {
      ldm.push_back(core->ldm_.bytes(0));
      clocks.push_back(&core->cycle_);
    }
    checks_->start_launch(name_, ldm, std::move(clocks), machine_->arch.ldm_bytes, with_groups_);
  }
  guarded([&] {
    if (group_.shared.trace.enabled()) group_.shared.trace.mark({MarkerKind::kLaunchBegin, start_cycle_, -1, 0, name_});
    if (workers) {
      group_.runners.ensure(worker, workers);
    } else {
      fibers_.reserve(cores_.size());
    }
    for (std::size_t i = 0; i < cores_.size(); ++i) {
      if (workers) {
        group_.runners.assign(i, *this, cores_[i]->cycle_, cores_[i]->order_id_);
      } else {
        fibers_.emplace_back(std::allocator_arg, group_.stacks.slice(i), [this, i] { run_core(static_cast<int>(i)); });
      }
      ++live_;
    }
  });
}

void GroupRun::finish() noexcept {
  guarded([this] {
    for (auto& fiber : fibers_) fiber.join();
    fibers_.clear();
    engine().end_launch(ldm_window());  // the copies replicate_on_read gets still owe died with the buffers
    if (checks_ != nullptr) checks_->end_launch();
    const Cycle end = latest_cycle();
    group_.stats.cycles = end;
    ++group_.stats.launches;
    if (group_.shared.trace.enabled()) group_.shared.trace.mark({MarkerKind::kLaunchEnd, end, -1, 0, name_});
  });
}

Cycle GroupRun::latest_cycle() const {
  Cycle end = start_cycle_;
  for (const auto& core : cores_) end = std::max(end, core->cycle_);
  return end;
}

void GroupRun::run_core(int id) noexcept {
  Core& core = *cores_[static_cast<std::size_t>(id)];
  CoreOrder& order = running_order();
  core.order_ = &order;
  const auto [low, high] = group_.stacks.bounds(static_cast<std::size_t>(id));
  core.stack_low_ = reinterpret_cast<std::uintptr_t>(low);
  core.stack_high_ = reinterpret_cast<std::uintptr_t>(high);
  core.in_kernel_ = true;
  try {
    core.sync_point();  // take this core's place in simulated-time order before running any kernel code
    core.resume();      // and, on a shared node, its physical core
    if (!aborted_) {
      (*kernel_)(core);
      core.check_exit();
    }
  } catch (const Fault& fault) {
    record_fault(fault);
  } catch (const Aborted&) {
    // another core of the group trapped; this one just unwinds
  } catch (const TraceSpillError&) {
    record_host_error();  // the host's failure, not the kernel's: no fault, the launch rethrows it
  } catch (const std::exception& e) {
    record_fault(Fault(FaultKind::kKernelException, {group_.shared.cg, id}, core.cycle_, name_,
                       fmt::format("the kernel threw: {}", e.what())));
  } catch (...) {
    record_fault(Fault(FaultKind::kKernelException, {group_.shared.cg, id}, core.cycle_, name_,
                       "the kernel threw an exception that is not a std::exception"));
  }
  core.in_kernel_ = false;
  core.release_core();
  auto& stats = group_.stats.cores[static_cast<std::size_t>(id)];
  stats.ldm_high_water = std::max(stats.ldm_high_water, core.ldm_.high_water());
  states_[static_cast<std::size_t>(id)] = State::kExited;
  // The launch's ldm high-water rides on the exit marker: per-layer ldm use is read from it (docs/trace-format.md).
  // (Checked first: a marker is built, with its string, only to be recorded.)
  if (group_.shared.trace.enabled())
    group_.shared.trace.mark(
        {MarkerKind::kCoreExit, core.cycle_, id, static_cast<std::uint32_t>(core.ldm_.high_water()), {}});
  if (--live_ == 0 && on_exit_) on_exit_();
}

GroupRun::Slot& GroupRun::slot_for(const Core& core, Scope scope) {
  const Arch& a = machine_->arch;
  switch (scope) {
    case Scope::kGroup:
      return slots_[0];
    case Scope::kNode:  // barrier() hands node barriers to NodeSync before asking for a slot
      throw std::logic_error("a node barrier has no group slot");
    case Scope::kRow:
      return slots_[1 + static_cast<std::size_t>(core.row())];
    case Scope::kCol:
      return slots_[1 + a.rows + static_cast<std::size_t>(core.col())];
  }
  return slots_[0];
}

void GroupRun::barrier(Core& core, Scope scope) {
  if (scope == Scope::kNode) {
    node_barrier(core);
    return;
  }
  Slot& slot = slot_for(core, scope);
  const Cycle arrival = core.cycle_;
  slot.latest_arrival = std::max(slot.latest_arrival, arrival);
  if (++slot.arrived == slot.expected) {
    slot.release = slot.latest_arrival + machine_->arch.barrier_cycles;
    ++slot.generation;
    slot.arrived = 0;
    slot.latest_arrival = 0;
    for (int waiter : slot.waiting) {
      cores_[static_cast<std::size_t>(waiter)]->order_->cycle = slot.release;  // resume in time order
      states_[static_cast<std::size_t>(waiter)] = State::kReady;
    }
    slot.waiting.clear();
    if (group_.shared.trace.enabled()) {
      group_.shared.trace.mark({MarkerKind::kBarrier, slot.release, core.id(), static_cast<std::uint32_t>(scope), {}});
    }
    if (checks_ != nullptr) checks_->on_barrier(scope, core.row(), core.col());
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

void GroupRun::node_barrier(Core& core) {
  if (node_ == nullptr) {
    core.trap(FaultKind::kInvalidArgument,
              "a node barrier needs a launch whose core groups run together; hint: set LaunchSpec::node_sync");
  }
  const Cycle arrival = core.cycle_;
  const auto id = static_cast<std::size_t>(core.id());
  const auto [arrived, expected] = node_->progress();
  states_[id] = State::kAtBarrier;
  barrier_notes_[id] = {Scope::kNode, arrival, arrived + 1, expected};
  const Cycle release = node_->barrier(*this, core);
  states_[id] = State::kReady;
  if (checks_ != nullptr && ++node_passes_[id] > node_sweeps_) {  // the group's first core past the barrier
    ++node_sweeps_;
    checks_->on_barrier(Scope::kNode, 0, 0);
  }
  core.stats_->barrier_wait_cycles += release - arrival;
  core.cycle_ = release;
}

void GroupRun::wake_from_node_barrier(int core, Cycle release) {
  wake(core, release);
}

void GroupRun::mark_node_barrier(Cycle release) {
  group_.shared.trace.mark({MarkerKind::kBarrier, release, -1, static_cast<std::uint32_t>(Scope::kNode), {}});
}

void GroupRun::wake(int core, Cycle at) {
  cores_[static_cast<std::size_t>(core)]->order_->cycle = at;  // resume in time order
  states_[static_cast<std::size_t>(core)] = State::kReady;
}

void GroupRun::reg_put(Core& core, RegBus bus, int dst, const RegValue& value) {
  const RegisterCommArch& comm = machine_->arch.register_comm;
  const char* bus_name = bus == RegBus::kRow ? "row" : "column";
  if (!comm.available) {
    core.trap(FaultKind::kInvalidArgument,
              fmt::format("register communication (a {} put) is not available on arch '{}'; hint: exchange data "
                          "through DMA or, on SW26010-Pro, RMA",
                          bus_name, machine_->arch.name));
  }
  const bool row_bus = bus == RegBus::kRow;
  const int width = static_cast<int>(row_bus ? machine_->arch.cols : machine_->arch.rows);
  const int self = row_bus ? core.col() : core.row();
  if (dst < 0 || dst > width || dst == self) {
    core.trap(FaultKind::kInvalidArgument,
              fmt::format("register {} put to {} from {} {}: the destination must be another {} of this {} "
                          "(0..{}) or {} for all of them",
                          bus_name, dst, row_bus ? "column" : "row", self, row_bus ? "column" : "row", bus_name,
                          width - 1, width));
  }
  core.cycle_ += comm.put_cycles;
  core.stats_->busy_cycles += comm.put_cycles;
  for (int k = 0; k < width; ++k) {
    if (k == self || (dst != width && k != dst)) continue;
    const int target = row_bus ? core.row() * static_cast<int>(machine_->arch.cols) + k
                               : k * static_cast<int>(machine_->arch.cols) + core.col();
    RegQueue& q = reg_queue(target, bus);
    if (q.values.size() >= comm.buffer_entries) {  // full: wait until the receiver takes a value
      const Cycle since = core.cycle_;
      reg_notes_[static_cast<std::size_t>(core.id())] = {bus, since, target};
      block(core, State::kAtRegPut, q.changed, [&] { return q.values.size() < comm.buffer_entries; });
      core.cycle_ = std::max(core.cycle_, q.last_get);
      core.stats_->barrier_wait_cycles += core.cycle_ - since;
    }
    q.values.push_back({value, core.cycle_ + comm.latency_cycles, core.id()});
    if (states_[static_cast<std::size_t>(target)] == State::kAtRegGet &&
        reg_notes_[static_cast<std::size_t>(target)].bus == bus) {
      wake(target, std::max(cores_[static_cast<std::size_t>(target)]->cycle_, core.cycle_ + comm.latency_cycles));
    }
    q.changed.notify_all();
  }
}

RegValue GroupRun::reg_get(Core& core, RegBus bus) {
  const RegisterCommArch& comm = machine_->arch.register_comm;
  if (!comm.available) {
    core.trap(FaultKind::kInvalidArgument,
              fmt::format("register communication (a {} get) is not available on arch '{}'",
                          bus == RegBus::kRow ? "row" : "column", machine_->arch.name));
  }
  RegQueue& q = reg_queue(core.id(), bus);
  if (q.values.empty()) {
    reg_notes_[static_cast<std::size_t>(core.id())] = {bus, core.cycle_, -1};
    block(core, State::kAtRegGet, q.changed, [&] { return !q.values.empty(); });
  }
  const RegMessage m = q.values.front();
  q.values.pop_front();
  if (m.arrival > core.cycle_) {
    core.release_core();
    core.stats_->barrier_wait_cycles += m.arrival - core.cycle_;
    core.cycle_ = m.arrival;
  }
  core.resume();  // after a wait that gave the core up: the get itself is work on the core
  core.cycle_ += comm.get_cycles;
  core.stats_->busy_cycles += comm.get_cycles;
  q.last_get = core.cycle_;
  // A sender blocked on this full buffer may go on from now.
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    if (states_[i] == State::kAtRegPut && reg_notes_[i].peer == core.id() && reg_notes_[i].bus == bus) {
      wake(static_cast<int>(i), std::max(cores_[i]->cycle_, core.cycle_));
    }
  }
  q.changed.notify_all();
  return m.value;
}

void GroupRun::block(Core& core, State state, boost::fibers::condition_variable_any& changed,
                     const std::function<bool()>& done) {
  const auto id = static_cast<std::size_t>(core.id());
  NoLock lock;
  while (!done() && !aborted_) {
    core.release_core();  // a stall: another context may use the physical core
    states_[id] = state;  // (again, after a wake-up that found the condition taken by another core)
    changed.wait(lock);
  }
  if (aborted_) throw Aborted{};
  states_[id] = State::kReady;
}

Cycle GroupRun::rma(Core& core, const RmaRequest& r) {
  const Arch& a = machine_->arch;
  const RmaArch& rma = a.rma;
  if (!rma.available) {
    core.trap(FaultKind::kInvalidArgument,
              fmt::format("{}: RMA is not available on arch '{}'; hint: exchange data through DMA or, on SW26010, "
                          "register communication",
                          r.api, a.name));
  }
  const auto ldm_bytes = a.ldm_bytes;
  const int cores = static_cast<int>(a.cores_per_group());
  if (r.bytes == 0 || r.bytes % 4 != 0 || r.local % 4 != 0 || r.remote % 4 != 0) {
    core.trap(FaultKind::kDmaMisaligned,
              fmt::format("{}: length {} and ldm offsets 0x{:x} (local), 0x{:x} (remote) must be positive multiples "
                          "of 4",
                          r.api, r.bytes, r.local, r.remote));
  }
  if (r.local > ldm_bytes || r.bytes > ldm_bytes - r.local || r.remote > ldm_bytes || r.bytes > ldm_bytes - r.remote) {
    core.trap(FaultKind::kDmaOutOfBounds,
              fmt::format("{}: {} bytes at ldm offsets 0x{:x} (local) / 0x{:x} (remote) leave the {}-byte local store",
                          r.api, r.bytes, r.local, r.remote, ldm_bytes));
  }
  if (r.scope == RmaScope::kCore && (r.peer < 0 || r.peer >= cores)) {
    core.trap(FaultKind::kInvalidArgument,
              fmt::format("{}: peer core {} is not in the group (0..{})", r.api, r.peer, cores - 1));
  }
  if (r.scope != RmaScope::kCore && r.op == RmaOp::kGet) {
    core.trap(FaultKind::kInvalidArgument, fmt::format("{}: a broadcast RMA is a put", r.api));
  }
  const std::vector<int> receivers =
      r.op == RmaOp::kPut ? core.rma_receivers(r.scope, r.peer) : std::vector<int>{core.id()};
  std::byte* const base = stores_ + machine_->ldm_window().offset;
  const std::uint64_t stride = machine_->node->arch.ldm_bytes;
  const auto at = [&](int id, LdmAddr offset) { return base + static_cast<std::size_t>(id) * stride + offset; };
  const int source = r.op == RmaOp::kPut ? core.id() : r.peer;
  const LdmAddr from = r.op == RmaOp::kPut ? r.local : r.remote;
  const LdmAddr to = r.op == RmaOp::kPut ? r.remote : r.local;
  if (r.move_data) {
    const std::uint64_t window = machine_->ldm_window().offset;  // the engine's copies owed there settled first
    engine().make_copies(source, window + from, r.bytes);
    // Written over: copies owed there settled, and copies others are owed from there made while it holds them.
    for (int id : receivers) engine().before_ldm_write(id, window + to, r.bytes);
    // Through a copy: a broadcast whose source overlaps its destination gives every receiver the same bytes.
    const std::vector<std::byte> bytes(at(source, from), at(source, from) + r.bytes);
    for (int id : receivers) std::memcpy(at(id, to), bytes.data(), r.bytes);
  }

  // Timing: the engine's issue slot, then the link, then the flight to the farthest receiver.
  const auto cluster_of = [&](int id) {
    const int cl = static_cast<int>(rma.cluster);
    return std::pair{id / static_cast<int>(a.cols) / cl, id % static_cast<int>(a.cols) / cl};
  };
  const auto [row0, col0] = cluster_of(core.id());
  int hops = 0;
  for (int id : receivers) {
    const auto [row1, col1] = cluster_of(r.op == RmaOp::kPut ? id : r.peer);
    hops = std::max(hops, std::abs(row1 - row0) + std::abs(col1 - col0));
  }
  const double rate = r.scope == RmaScope::kCore ? rma.bytes_per_cycle : rma.broadcast_bytes_per_cycle;
  // The engine belongs to the physical core: every context on it queues there.
  Cycle& issue_free = core.physical_ != nullptr ? core.physical_->rma_issue_free : core.rma_issue_free_;
  Cycle& link_free = core.physical_ != nullptr ? core.physical_->rma_link_free : core.rma_link_free_;
  const Cycle issue_start = std::max(core.cycle_, issue_free);
  issue_free = issue_start + rma.issue_cycles;
  const Cycle link_start = std::max(issue_free, link_free);
  link_free = link_start + static_cast<Cycle>(std::ceil(static_cast<double>(r.bytes) / rate));
  core.cycle_ += 1;  // the instruction that hands the operation to the engine
  core.stats_->busy_cycles += 1;
  return link_free + rma.latency_cycles + static_cast<Cycle>(hops) * rma.hop_cycles;
}

void GroupRun::block_until(Core& core, const std::function<bool()>& ready, const std::string& what) {
  if (ready()) return;
  condition_notes_[static_cast<std::size_t>(core.id())] = fmt::format("{} (since cycle {})", what, core.cycle_);
  block(core, State::kAtCondition, condition_changed_, ready);
}

void GroupRun::notify_waiters(Cycle at) {
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    if (states_[i] == State::kAtCondition) wake(static_cast<int>(i), std::max(cores_[i]->cycle_, at));
  }
  condition_changed_.notify_all();
}

void GroupRun::record_fault(const Fault& fault) {
  auto key = [](const Fault& f) { return std::make_tuple(f.cycle(), f.core()); };
  if (!first_fault_ || key(fault) < key(*first_fault_)) first_fault_ = fault;
  group_.shared.trace.mark(
      {MarkerKind::kFault, fault.cycle(), fault.core(), static_cast<std::uint32_t>(fault.kind()), fault.what()});
  logger("runtime")->debug("[{} {}:{}] {}", fault.cycle(), fault.cg(), fault.core(), fault.what());
  if (node_ != nullptr) {
    node_->abort_all();
  } else {
    abort();
  }
}

void GroupRun::record_host_error() {
  if (!host_error_) host_error_ = std::current_exception();
  if (node_ != nullptr) {
    node_->abort_all();
  } else {
    abort();
  }
}

void GroupRun::abort() {
  if (aborted_) return;
  aborted_ = true;
  wake_blocked();
}

void GroupRun::release_core(Core& core) {
  core.physical_->release(core.cycle_);
}

void GroupRun::idle_core(Core& core, Cycle until) {
  core.physical_->idle(core.cycle_, until);
}

void GroupRun::dma_wait(Core& core, Cycle until) {
  if (core.physical_ != nullptr) core.physical_->dma_wait(machine_->context, core.cycle_, until);
}

void GroupRun::take_core(Core& core) {
  PhysicalCore& physical = *core.physical_;
  const auto id = static_cast<std::size_t>(core.id());
  NoLock lock;
  while (physical.held() && !aborted_) {
    states_[id] = State::kAtCore;
    physical.released().wait(lock);
  }
  if (aborted_) throw Aborted{};
  states_[id] = State::kReady;
  const Cycle start = physical.take(machine_->context, core.cycle_, machine_->arch.context_switch_cycles);
  core.stats_->context_wait_cycles += start - core.cycle_;
  core.cycle_ = start;
}

void GroupRun::wake_blocked() {
  for (auto& slot : slots_) slot.released.notify_all();
  for (const auto& core : cores_) {
    if (core->physical_ != nullptr) core->physical_->released().notify_all();
  }
  if (reg_queues_) {
    for (std::size_t i = 0; i < reg_queue_count_; ++i) reg_queues_[i].changed.notify_all();
  }
  condition_changed_.notify_all();
}

void GroupRun::record_warning(const Core& core, std::string_view api, std::string_view field,
                              const std::string& message, std::uint64_t code_site, std::string_view buffer) {
  // The code the request was made for, where its layer names it (athread: the program's call and line, and the
  // buffers in its terms), else the kernel's own call and the allocation, named as a trap names them.
  std::string text = message;
  const auto& code_sites = core.group_state_->get<LintCodeSites>().by_core;
  if (const auto it = code_sites.find(&core); it != code_sites.end()) {
    code_site = it->second.site;
    if (it->second.where != nullptr) text += fmt::format(" [{}]", it->second.where(code_site, it->second.context));
  } else {
    if (!buffer.empty()) {
      const std::size_t hint = text.find("; hint: ");
      text.insert(hint == std::string::npos ? text.size() : hint, buffer);
    }
    if (code_site != 0) text += fmt::format(" [called from {}]", code_site_text(code_site));
  }
  group_.shared.trace.mark({MarkerKind::kLintWarning, core.cycle(), core.id(), 0, text});
  const bool first = lint_->add(
      LintSite{name_, std::string(api), std::string(field), group_.shared.cg, core.id(), core.cycle(), 1, text},
      code_site);
  // One log line per site: a bad request in a loop every core runs would otherwise log once per request.
  dma_log_->log(first ? spdlog::level::warn : spdlog::level::debug, "[{} {}:{}] lint: {}", core.cycle(),
                group_.shared.cg, core.id(), text);
}

void GroupRun::on_deadlock(const std::vector<GroupRun*>& together) {
  if (aborted_) {
    if (node_ != nullptr) node_->abort_all();
    wake_blocked();
    return;
  }
  std::string dump;
  Cycle latest = start_cycle_;
  const bool several = together.size() > 1;
  for (const GroupRun* run : together) dump += run->core_states(several, latest);
  record_fault(Fault(FaultKind::kDeadlock, {group_.shared.cg, -1}, latest, name_,
                     fmt::format("every live core of the {} is blocked and none can proceed; hint: make every "
                                 "core of a barrier's scope reach it the same number of times, and every register "
                                 "get meet a put{}",
                                 several ? "launch's core groups" : "group", dump)));
}

std::string GroupRun::core_states(bool name_group, Cycle& latest) const {
  std::string dump;
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
        // A node barrier's count is the one now (its arrivals are spread over groups); a group barrier's, the
        // waiter's place in the arrival order.
        const auto [arrived, expected] = b.scope == Scope::kNode ? node_->progress() : std::pair{b.arrived, b.expected};
        state = fmt::format("waiting at a {} barrier since cycle {} ({} of {} arrived)", scope_name(b.scope), b.arrival,
                            arrived, expected);
        break;
      }
      case State::kAtRegGet:
        state = fmt::format(
            "waiting since cycle {} for a value on its register {} bus that no core sent (a get "
            "with no matching put)",
            reg_notes_[i].since, reg_notes_[i].bus == RegBus::kRow ? "row" : "column");
        break;
      case State::kAtRegPut:
        state =
            fmt::format("waiting since cycle {} to put a register value to core {}, whose {} buffer is full",
                        reg_notes_[i].since, reg_notes_[i].peer, reg_notes_[i].bus == RegBus::kRow ? "row" : "column");
        break;
      case State::kAtCondition:
        state = "waiting: " + condition_notes_[i];
        break;
      case State::kAtCore:
        state = fmt::format("waiting since cycle {} for its physical core, held by context {}", core.cycle_,
                            core.physical_->holder());
        break;
      case State::kReady:
        state = fmt::format("blocked at cycle {}", core.cycle_);
        break;
    }
    const std::string where = name_group ? fmt::format("cg {} ", group_.shared.cg) : std::string();
    dump += fmt::format("\n  {}core {} (row {}, col {}): {}", where, i, core.row(), core.col(), state);
  }
  return dump;
}

}  // namespace ldmsim::detail
