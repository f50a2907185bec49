// The Machine facade and the Launch handle.
#include "ldmsim/runtime/machine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "check_state.hpp"
#include "context_races.hpp"
#include "launch_state.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/sim/host_pages.hpp"
#include "ldmsim/sim/logging.hpp"
#include "ldmsim/trace/file.hpp"
#include "lint_state.hpp"
#include "machine_impl.hpp"

namespace ldmsim {

Launch::Launch(Launch&&) noexcept = default;
Launch& Launch::operator=(Launch&& other) noexcept {
  if (this != &other) {
    if (state_) state_->join();
    state_ = std::move(other.state_);
  }
  return *this;
}

Launch::~Launch() {
  if (!state_) return;
  if (auto fault = state_->join()) {
    logger("runtime")->error("a launch was destroyed without join(); its fault is dropped: {}", fault->what());
  }
}

void Launch::join() {
  if (!state_) return;
  auto state = std::move(state_);
  const std::optional<Fault> fault = state->join();
  if (state->host_error()) std::rethrow_exception(state->host_error());  // before a fault it may have caused
  if (fault) throw *fault;
}

Machine::Machine(Arch arch, MachineOptions options)
    : impl_(std::make_unique<detail::MachineImpl>(std::move(arch), options)) {}

Machine::Machine(std::unique_ptr<detail::MachineImpl> impl) : impl_(std::move(impl)) {}

Machine::~Machine() {
  // A Launch handle that outlives its machine must not run on freed state: finish it here.
  if (auto launch = impl_->active_launch.lock()) {
    if (auto fault = launch->join()) {
      logger("runtime")->error("machine destroyed before its launch was joined; the fault is dropped: {}",
                               fault->what());
    }
  }
}

const Arch& Machine::arch() const {
  return impl_->arch;
}
HostState& Machine::control_state() const {
  return *impl_->host_state;
}
const MachineOptions& Machine::options() const {
  return impl_->options;
}
unsigned Machine::threads() const {
  return impl_->threads;
}
std::string Machine::launch_prefix() const {
  return impl_->label.empty() ? std::string() : impl_->label + ":";
}
MainMemory& Machine::memory() {
  return impl_->memory;
}

void Machine::run_control(const std::function<void()>& control, const std::function<void()>& poll,
                          std::chrono::milliseconds every) {
  impl_->require_idle("run_control");  // the launch's round would still hold worker 0
  if (!impl_->workers) return control();
  impl_->workers->run_control(control, poll, every);
}

void Machine::prefault_host_memory(std::size_t ldm_bytes_per_core, std::uint64_t main_bytes,
                                   const std::atomic<bool>& stop) {
  impl_->require_idle("prefault_host_memory");  // a running launch may write these pages
  if (impl_->workers && !stop.load()) {
    // The cores' kept fibers, on the workers a first launch of every group gives them (set i of n goes to worker
    // i % n): making them touches each fiber stack's first page.
    const std::size_t workers = impl_->threads;
    std::vector<std::function<void()>> jobs(workers);
    for (std::size_t w = 0; w < workers; ++w) {
      jobs[w] = [this, w, workers] {
        for (std::size_t g = w; g < impl_->groups.size(); g += workers) {
          impl_->groups[g]->runners.ensure(static_cast<int>(w), impl_->workers);
        }
      };
    }
    impl_->workers->run(std::move(jobs));
  }
  const int first = impl_->physical_group(0);
  impl_->memory.prefault(MainMemory::kBase + static_cast<std::uint64_t>(first) * impl_->memory.bytes_per_cg(),
                         main_bytes, stop);
  const std::uint64_t physical_ldm = impl_->node->arch.ldm_bytes;
  const LdmWindow window = impl_->ldm_window();
  const std::size_t bytes = std::min<std::uint64_t>(ldm_bytes_per_core, window.bytes);
  // The stores the first launches use: the launch workers' (groups run alone borrow them), else the groups' own.
  std::vector<std::byte*> stores;
  for (const auto& mapping : impl_->node->thread_stores) stores.push_back(mapping->data());
  if (stores.empty()) {
    for (const auto& group : impl_->groups) stores.push_back(group->shared.ldm.data());
  }
  for (std::byte* set : stores) {
    for (std::uint32_t core = 0; core < impl_->arch.cores_per_group() && !stop.load(); ++core) {
      populate_pages(set + core * physical_ldm + window.offset, bytes, stop);
    }
  }
}
const MainMemory& Machine::memory() const {
  return impl_->memory;
}

namespace {
/// The written bytes of the machine's allocations, when the init check is on (docs/checking.md), else null.
detail::DeviceInit* device_init(detail::MachineImpl& impl) {
  auto* state = impl.host_state->find<detail::CheckState>();
  return state != nullptr && state->checks.init ? &state->device : nullptr;
}
}  // namespace

DeviceAddr Machine::allocate_bytes(std::size_t bytes, const AllocOptions& where) {
  impl_->require_idle("alloc");
  const DeviceAddr base =
      impl_->memory.allocate(bytes, where.alignment, impl_->physical_group(where.cg), where.name,
                             where.overwritten ? MainMemory::Fill::kOverwritten : MainMemory::Fill::kZeroed);
  if (detail::DeviceInit* init = device_init(*impl_)) init->on_alloc(base, bytes);
  return base;
}

void Machine::free_bytes(DeviceAddr base) {
  impl_->require_idle("free");
  if (impl_->node->context_races) {
    if (const Region* region = impl_->memory.find_region(base, 1)) {
      impl_->node->context_races->forget(region->base, region->end());
    }
  }
  impl_->memory.free(base);
  if (detail::DeviceInit* init = device_init(*impl_)) init->on_free(base);
}

void Machine::write_bytes(DeviceAddr dst, std::span<const std::byte> src) {
  impl_->require_idle("upload");
  if (src.empty()) return;
  if (impl_->memory.find_region(dst, src.size()) == nullptr) {
    throw ConfigError(fmt::format("upload of {} bytes to 0x{:x} is not inside one allocated region", src.size(), dst));
  }
  impl_->memory.write(dst, src);
  if (detail::DeviceInit* init = device_init(*impl_)) init->mark(dst, dst + src.size());
}

void Machine::upload_shared(DevicePtr<f16> dst, const SharedHalves& values) {
  impl_->require_idle("upload");
  const Region* region = impl_->memory.find_region(dst.addr(), values.size() * sizeof(f16));
  if (region == nullptr || region->base != dst.addr() || region->bytes != values.size() * sizeof(f16)) {
    throw ConfigError(fmt::format("upload of {} values to 0x{:x} does not fill one allocated region exactly",
                                  values.size(), dst.addr()));
  }
  impl_->memory.lend(dst.addr(), values.shared(), std::as_bytes(values.span()));
  if (detail::DeviceInit* init = device_init(*impl_)) init->mark(region->base, region->end());
}

void Machine::read_bytes(DeviceAddr src, std::span<std::byte> dst) const {
  impl_->require_idle("download");
  if (dst.empty()) return;
  if (impl_->memory.find_region(src, dst.size()) == nullptr) {
    throw ConfigError(
        fmt::format("download of {} bytes from 0x{:x} is not inside one allocated region", dst.size(), src));
  }
  impl_->memory.read(src, dst);
}

Launch Machine::launch_kernel(LaunchSpec spec, Kernel kernel) {
  impl_->require_idle("launch");
  impl_->require_launchable();
  std::vector<int> groups = spec.groups;
  if (groups.empty()) {
    for (std::uint32_t cg = 0; cg < impl_->arch.core_groups; ++cg) groups.push_back(static_cast<int>(cg));
  }
  std::sort(groups.begin(), groups.end());
  if (std::adjacent_find(groups.begin(), groups.end()) != groups.end()) {
    throw ConfigError("launch: a core group is listed twice");
  }
  for (int cg : groups) {
    if (cg < 0 || static_cast<std::uint32_t>(cg) >= impl_->arch.core_groups) {
      throw ConfigError(
          fmt::format("launch: core group {} does not exist (the arch has {})", cg, impl_->arch.core_groups));
    }
  }
  if (!kernel) throw ConfigError("launch: the kernel is empty");
  std::vector<std::vector<int>> sets = std::move(spec.node_sync_sets);
  if (!sets.empty()) {
    if (spec.node_sync) throw ConfigError("launch: node_sync and node_sync_sets exclude each other");
    std::vector<int> covered;
    for (auto& set : sets) {
      if (set.empty()) throw ConfigError("launch: a node_sync set is empty");
      std::sort(set.begin(), set.end());
      covered.insert(covered.end(), set.begin(), set.end());
    }
    std::sort(covered.begin(), covered.end());
    if (covered != groups) {
      throw ConfigError("launch: node_sync_sets must hold every group of the launch exactly once");
    }
  } else if (spec.node_sync) {
    sets.push_back(groups);
  }
  auto state = std::make_shared<detail::LaunchState>(*impl_, groups, std::move(kernel), std::move(spec.name), sets);
  impl_->active_launch = state;
  if (detail::current_group_control() >= 0) detail::note_group_control_launch(state);
  return Launch(std::move(state));
}

std::unique_ptr<Machine> Machine::group_view(std::vector<int> groups) {
  return std::unique_ptr<Machine>(new Machine(std::make_unique<detail::MachineImpl>(*impl_, std::move(groups))));
}

void Machine::start_no_earlier(const std::vector<int>& groups, Cycle cycle) {
  impl_->require_idle("start_no_earlier");
  for (const int cg : groups) {
    impl_->physical_group(cg);  // checks cg
    Cycle& clock = impl_->groups[static_cast<std::size_t>(cg)]->stats.cycles;
    clock = std::max(clock, cycle);
  }
}

void Machine::reset() {
  impl_->require_idle("reset");
  if (impl_->is_view || impl_->node->contexts != 1) {
    throw ConfigError(
        "Machine::reset: only a machine of its own can be reset, not a group view or a context of a "
        "shared node");
  }
  MainMemory& memory = impl_->memory;
  for (const Region& region : memory.regions()) memory.free(region.base);
  if (auto* state = impl_->host_state->find<detail::CheckState>()) state->device.forget_all();
  for (const auto& group : impl_->node->groups) group->reset(impl_->node->arch, memory, impl_->options);
  for (const auto& group : impl_->groups) {
    group->stats = GroupStats{};
    group->stats.cores.resize(impl_->arch.cores_per_group());
  }
  if (auto* lint = impl_->host_state->find<detail::LintState>()) {
    for (auto& [cg, group] : lint->groups) group.sites.clear();  // the lint warnings counted with the stats
  }
}

Cycle Machine::group_clock(int cg) const {
  impl_->physical_group(cg);
  return impl_->groups[static_cast<std::size_t>(cg)]->stats.cycles;
}

RunStats Machine::stats() const {
  RunStats run;
  for (const auto& group : impl_->groups) {
    run.groups.push_back(group->stats);
    run.cycles = std::max(run.cycles, group->stats.cycles);
  }
  run.seconds = static_cast<double>(run.cycles) / impl_->arch.clock_hz;
  return run;
}

std::vector<const TraceRecorder*> Machine::trace() const {
  std::vector<const TraceRecorder*> out;
  for (const auto& group : impl_->node->groups) out.push_back(&group->trace);
  return out;
}

namespace {
/// The header with the machine's checking reports as "check" when checking is on (trace summary and report show
/// them), unless the caller put its own there.
nlohmann::json with_check_reports(const Machine& machine, const nlohmann::json& run_info) {
  nlohmann::json header = run_info.is_object() ? run_info : nlohmann::json::object();
  if (enabled_checks(machine).any() && !header.contains("check")) {
    header["check"] = check_reports_json(check_reports(machine));
  }
  return header;
}
}  // namespace

void Machine::write_trace(const std::filesystem::path& file, const nlohmann::json& run_info) const {
  impl_->require_idle("write_trace");
  detail::write_node_trace(*impl_->node, file, with_check_reports(*this, run_info), stats().cycles);
}

void Machine::write_trace_after_crash(const std::filesystem::path& file, const nlohmann::json& run_info) const {
  detail::write_node_trace(*impl_->node, file, with_check_reports(*this, run_info), stats().cycles);
}

namespace detail {
namespace {
/// The run's first trap (earliest cycle, then core group, then core) from the groups' fault markers, in the form
/// stats.json gives a fault ({kind, cg, core, cycle, kernel, message}); null when nothing trapped.
nlohmann::json first_fault_record(const NodeState& node) {
  nlohmann::json first = nullptr;
  std::tuple<Cycle, int, int> first_at{};
  for (const auto& group : node.groups) {
    std::string kernel;  // the launch the marker belongs to
    for (const Marker& m : group->trace.markers()) {
      if (m.kind == MarkerKind::kLaunchBegin) kernel = m.text;
      if (m.kind != MarkerKind::kFault) continue;
      const std::tuple<Cycle, int, int> at{m.cycle, group->cg, m.core};
      if (!first.is_null() && !(at < first_at)) continue;
      const auto kind = static_cast<FaultKind>(m.value);
      // The marker holds the fault's what(): its detail follows the prefix Fault formats.
      const std::string location =
          m.core >= 0 ? fmt::format("cg {} core {}", group->cg, m.core) : fmt::format("cg {}", group->cg);
      const std::string prefix =
          fmt::format("trap {}: {}{} at cycle {}: ", to_string(kind), location,
                      kernel.empty() ? std::string() : fmt::format(" in kernel '{}'", kernel), m.cycle);
      first = {{"kind", std::string(to_string(kind))},
               {"cg", group->cg},
               {"core", m.core},
               {"cycle", m.cycle},
               {"kernel", kernel},
               {"message", m.text.starts_with(prefix) ? m.text.substr(prefix.size()) : m.text}};
      first_at = at;
    }
  }
  return first;
}
}  // namespace

void write_node_trace(const NodeState& node, const std::filesystem::path& file, nlohmann::json header, Cycle cycles) {
  if (!header.is_object()) header = nlohmann::json::object();
  header["arch"] = node.arch.to_json();
  header["cycles"] = cycles;
  header["seconds"] = static_cast<double>(cycles) / node.arch.clock_hz;
  // A trapped run's trace says so (trace summary: "complete up to the fault"), unless the caller gave the fault.
  if (!header.contains("fault")) header["fault"] = first_fault_record(node);
  std::vector<const TraceRecorder*> groups;
  for (const auto& group : node.groups) groups.push_back(&group->trace);
  ::ldmsim::write_trace(file, header, std::span<const TraceRecorder* const>(groups), node.options.trace_codec);
}
}  // namespace detail

std::uint64_t Machine::lint_warnings() const {
  std::uint64_t n = 0;
  for (const auto& group : impl_->groups)
    for (const auto& core : group->stats.cores) n += core.lint_warnings;
  return n;
}

}  // namespace ldmsim
