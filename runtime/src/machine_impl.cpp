// Construction of a machine's private state (see machine_impl.hpp).
#include "machine_impl.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <boost/fiber/operations.hpp>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <thread>

#include "launch_state.hpp"
#include "scheduler.hpp"

namespace ldmsim::detail {

HostMapping::HostMapping(std::size_t bytes) : bytes_(bytes) {
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(p);
}

HostMapping::~HostMapping() {
  munmap(data_, bytes_);
}

GroupState::GroupState(const Arch& arch, int cg_index, MainMemory& memory, const MachineOptions& options,
                       bool shared_cores)
    : cg(cg_index),
      ldm(arch.ldm_bytes * arch.cores_per_group()),
      trace(cg_index, options.trace),
      cores(shared_cores ? arch.cores_per_group() : 0) {
  engine.emplace(arch, cg_index, memory, trace.enabled() ? &trace : nullptr, ldm.data(),
                 options.alignment == AlignmentPolicy::kLint, options.move_data);
  // Spill raw: compressing on the group's thread would cost more than the simulation itself (~40-120 ns per
  // event); write_trace compresses once, block by block.
  if (options.trace) trace.spill_to(spill_directory(options), TraceCodec::kRaw);
}

void GroupState::reset(const Arch& arch, MainMemory& memory, const MachineOptions& options) {
  trace.clear();
  engine.emplace(arch, cg, memory, trace.enabled() ? &trace : nullptr, ldm.data(),
                 options.alignment == AlignmentPolicy::kLint, options.move_data);
}

GroupContext::GroupContext(GroupState& shared_group, const Arch& arch, const MachineOptions& options)
    : shared(shared_group),
      stacks(arch.cores_per_group(), options.fiber_stack_bytes),
      runners(stacks, arch.cores_per_group()) {
  stats.cores.resize(arch.cores_per_group());
}

GroupContext::~GroupContext() = default;  // here, where GroupRun is complete

std::filesystem::path spill_directory(const MachineOptions& options) {
  if (!options.trace_spill_dir.empty()) return options.trace_spill_dir;
  std::error_code ec;
  auto dir = std::filesystem::temp_directory_path(ec);
  if (!ec) return dir;
  const char* tmpdir = std::getenv("TMPDIR");  // reported by the is_directory check below
  return tmpdir != nullptr ? tmpdir : "/tmp";
}

namespace {
unsigned choose_threads(unsigned requested, std::uint32_t groups) {
  unsigned n = requested;
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
  return std::min<unsigned>(n, groups);
}
}  // namespace

NodeState::NodeState(Arch a, MachineOptions o, std::uint32_t context_count)
    : arch(std::move(a)),
      options(std::move(o)),
      threads(choose_threads(options.threads, arch.core_groups)),
      memory(arch.core_groups, arch.main_memory_bytes_per_cg),
      contexts(context_count) {
  if (options.fiber_stack_bytes < 16 * 1024) {
    throw ConfigError(fmt::format("fiber_stack_bytes must be at least 16384 (got {})", options.fiber_stack_bytes));
  }
  if (options.trace) {
    std::error_code ec;
    const auto dir = spill_directory(options);
    if (!std::filesystem::is_directory(dir, ec)) {
      throw ConfigError(
          fmt::format("trace spill directory '{}' is not a directory{} (choose another with "
                      "MachineOptions::trace_spill_dir, ldmsim run --trace-spill-dir, or TMPDIR)",
                      dir.string(), ec ? ": " + ec.message() : std::string()));
    }
  }
  check_stack_budget(static_cast<std::size_t>(arch.core_groups) * arch.cores_per_group() * contexts,
                     fmt::format("arch '{}' ({} core groups x {} cores{})", arch.name, arch.core_groups,
                                 arch.cores_per_group(), contexts > 1 ? fmt::format(" x {} contexts", contexts) : ""));
  groups.reserve(arch.core_groups);
  for (std::uint32_t cg = 0; cg < arch.core_groups; ++cg) {
    groups.push_back(std::make_unique<GroupState>(arch, static_cast<int>(cg), memory, options, contexts > 1));
  }
  if (contexts == 1 && options.thread_stores) {
    for (unsigned t = 0; t < threads; ++t) {
      thread_stores.push_back(std::make_unique<HostMapping>(arch.ldm_bytes * arch.cores_per_group()));
    }
  }
}

MachineImpl::MachineImpl(Arch a, MachineOptions o)
    : MachineImpl(std::make_shared<NodeState>(a, std::move(o), 1), a, 0, {}) {}

MachineImpl::MachineImpl(std::shared_ptr<NodeState> shared, Arch a, std::uint32_t index, std::string name)
    : node(std::move(shared)),
      arch(std::move(a)),
      options(node->options),
      threads(node->threads),
      memory(node->memory),
      context(index),
      label(std::move(name)) {
  if (node->contexts == 1) workers = std::make_shared<LaunchWorkers>(threads);
  launch_active = std::make_shared<std::vector<std::uint8_t>>(node->groups.size(), 0);
  groups.reserve(node->groups.size());
  for (const auto& group : node->groups) groups.push_back(std::make_shared<GroupContext>(*group, arch, options));
}

MachineImpl::MachineImpl(const MachineImpl& parent, std::vector<int> view)
    : node(parent.node),
      arch(parent.arch),
      options(parent.options),
      threads(std::min<unsigned>(parent.threads, static_cast<unsigned>(view.size()))),
      memory(parent.memory),
      context(parent.context),
      label(parent.label),
      workers(parent.workers),
      launch_active(parent.launch_active),
      host_state(parent.host_state),
      thread_states(parent.thread_states) {
  is_view = true;
  if (view.empty()) throw ConfigError("group view: no core group chosen");
  std::vector<int> sorted = view;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw ConfigError("group view: a core group is listed twice");
  }
  for (const int cg : view) {
    if (cg < 0 || static_cast<std::size_t>(cg) >= parent.groups.size()) {
      throw ConfigError(
          fmt::format("group view: core group {} does not exist (the machine has {})", cg, parent.groups.size()));
    }
    groups.push_back(parent.groups[static_cast<std::size_t>(cg)]);
  }
  arch.core_groups = static_cast<std::uint32_t>(view.size());
}

int MachineImpl::physical_group(int cg) const {
  if (cg < 0 || static_cast<std::size_t>(cg) >= groups.size()) {
    throw ConfigError(fmt::format("core group {} does not exist (the machine has {})", cg, groups.size()));
  }
  return groups[static_cast<std::size_t>(cg)]->shared.cg;
}

void MachineImpl::require_launchable() const {
  if (node->contexts == 1) return;
  if (node->session != nullptr) {
    // A pipelined run: the caller is a program fiber; it must be this context's.
    if (boost::this_fiber::properties<CoreOrder>().id == kProgramKeyBase + context) return;
  } else if (node->sequential_context == static_cast<int>(context)) {
    return;
  }
  throw ConfigError(
      fmt::format("context '{}' launched a kernel outside its program in ConcurrentMachine::run; hint: "
                  "contexts share the cores, so each launches only from its own program",
                  label));
}

void MachineImpl::join_active_launch() {
  if (auto launch = active_launch.lock()) launch->join();
}

void MachineImpl::require_idle(const char* what) const {
  // A launch on any group reads the memory's maps unlocked, unless group controls run (concurrent mode): then each
  // control waits only for its own groups.
  const bool active =
      memory.concurrent()
          ? std::any_of(
                groups.begin(), groups.end(),
                [this](const auto& group) { return (*launch_active)[static_cast<std::size_t>(group->shared.cg)] != 0; })
          : std::any_of(launch_active->begin(), launch_active->end(), [](std::uint8_t on) { return on != 0; });
  if (active) {
    throw std::logic_error(fmt::format("Machine::{} during a launch: join() the launch first", what));
  }
}

HostState& MachineImpl::thread_state(std::size_t i) {
  while (thread_states->size() <= i) thread_states->push_back(std::make_unique<HostState>());
  return *(*thread_states)[i];
}

}  // namespace ldmsim::detail
