// The control-core runtime facade: one simulated node with its main memory, core groups and DMA engines.
// Allocate and stage data, launch kernels onto core groups, join, read back, and read stats and the trace.
// No process-wide state: any number of Machines can coexist in one process.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ldmsim/runtime/core.hpp"
#include "ldmsim/runtime/device_ptr.hpp"
#include "ldmsim/runtime/host_state.hpp"
#include "ldmsim/runtime/stats.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fp16.hpp"
#include "ldmsim/sim/main_memory.hpp"
#include "ldmsim/trace/codec.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace ldmsim {

/// What happens when a DMA breaks the granularity rule: trap (default) or record a warning and go on.
enum class AlignmentPolicy : std::uint8_t { kTrap, kLint };

struct MachineOptions {
  /// Host threads running core groups; 0 = min(hardware threads, core groups).
  unsigned threads = 0;
  bool trace = true;
  /// Each core group's trace keeps one open chunk (4096 events) in memory; full chunks go, raw (32 bytes per
  /// event), to an unlinked temporary file in this directory, so a trace of any length takes bounded host memory.
  /// Empty: std::filesystem::temp_directory_path() (TMPDIR).
  std::filesystem::path trace_spill_dir;
  /// Encoding of the trace file's DMA blocks (zstd: a few bytes per event; raw: 32).
  TraceCodec trace_codec = TraceCodec::kZstd;
  AlignmentPolicy alignment = AlignmentPolicy::kTrap;
  /// Host stack of each compute-core fiber (a guard page sits below each one).
  std::size_t fiber_stack_bytes = 128 * 1024;
  /// False: DMA requests are checked, timed and recorded as usual but carry no bytes, so local stores and main
  /// memory keep what they held. Only for timing trials whose kernels read no value they move (the recurrent
  /// mapping search's trial machine); simulated cycles do not depend on the bytes.
  bool move_data = true;
  /// The core groups a host thread runs alone (a launch without node sync) share one set of local stores per
  /// thread, where the groups' own stores cost a first touch of every host page they use once per group (with T
  /// threads, T sixths of the pages on six groups; docs/architecture.md "Local stores"). A kernel then finds at its
  /// start what the group before it on its thread left there, which depends on the thread count, instead of what
  /// its own group left: turn it on only for kernels that read no ldm byte they have not written since they started
  /// (the operator library's; RunConfig's default and `ldmsim run` turn it on). Results are otherwise the same.
  bool thread_stores = false;
};

/// Every core group of the machine.
struct AllGroupsTag {};
inline constexpr AllGroupsTag AllGroups{};

/// Where and under which name a kernel runs.
struct LaunchSpec {
  std::vector<int> groups;  ///< empty = all core groups
  std::string name = "kernel";
  /// Run the groups together, interleaved in simulated-time order on one host thread (whatever
  /// MachineOptions::threads says), so that Scope::kNode barriers can join them.
  bool node_sync = false;
  /// Instead of node_sync: disjoint sets of the launch's groups (every group in exactly one set), each run together
  /// on one host thread, sets spread over the threads; a Scope::kNode barrier joins the groups of the caller's set.
  std::vector<std::vector<int>> node_sync_sets;
};

/// Where an allocation lives.
struct AllocOptions {
  int cg = 0;
  std::uint64_t alignment = 256;
  std::string name;
  /// The caller writes every byte before anything reads one (an upload that fills the region, or a loan): the
  /// bytes a freed region held are then not cleared first.
  bool overwritten = false;
};

namespace detail {
class MachineImpl;
class LaunchState;
}  // namespace detail

/// A launch in flight. join() waits for every core and rethrows the first Fault in (cycle, cg, core) order.
/// Destroying an unjoined launch joins it and logs (never throws) a fault.
class Launch {
 public:
  Launch() = default;
  Launch(Launch&&) noexcept;
  Launch& operator=(Launch&&) noexcept;
  ~Launch();
  void join();
  bool joinable() const { return state_ != nullptr; }

 private:
  friend class Machine;
  explicit Launch(std::shared_ptr<detail::LaunchState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::LaunchState> state_;
};

using Kernel = std::function<void(Core&)>;

class ConcurrentMachine;

class Machine {
 public:
  explicit Machine(Arch arch, MachineOptions options = {});
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  const Arch& arch() const;
  const MachineOptions& options() const;
  /// Host threads that run core groups.
  unsigned threads() const;
  /// The name this machine's launches carry in the trace: "CONTEXT:" for a context of a ConcurrentMachine, else
  /// empty.
  std::string launch_prefix() const;

  // ---- main memory (control core) ----
  template <typename T>
  DevicePtr<T> alloc(std::size_t count, AllocOptions where = {}) {
    return DevicePtr<T>(allocate_bytes(count * sizeof(T), where));
  }
  DeviceAddr allocate_bytes(std::size_t bytes, const AllocOptions& where = {});
  template <typename T>
  void free(DevicePtr<T> ptr) {
    free_bytes(ptr.addr());
  }
  void free_bytes(DeviceAddr base);
  template <typename T>
  void upload(DevicePtr<T> dst, std::span<const std::remove_const_t<T>> src) {
    static_assert(std::is_trivially_copyable_v<T>);
    write_bytes(dst.addr(), std::as_bytes(src));
  }
  template <typename T>
  void upload(DevicePtr<T> dst, const std::vector<T>& src) {
    upload(dst, std::span<const T>(src));
  }
  /// Uploads `values` into the region allocated at `dst` (exactly their size) without copying them: the region
  /// reads them where they are and copies them in at its first write (MainMemory::lend). How `ldmsim run` stages
  /// a model's constants.
  void upload_shared(DevicePtr<f16> dst, const SharedHalves& values);
  template <typename T>
  void download(std::span<T> dst, DevicePtr<const T> src) {
    static_assert(std::is_trivially_copyable_v<T>);
    read_bytes(src.addr(), std::as_writable_bytes(dst));
  }
  template <typename T>
  void download(std::vector<T>& dst, DevicePtr<const T> src) {
    download(std::span<T>(dst), src);
  }
  /// Host copies that check the range lies in one live region (ConfigError otherwise).
  void write_bytes(DeviceAddr dst, std::span<const std::byte> src);
  void read_bytes(DeviceAddr src, std::span<std::byte> dst) const;
  MainMemory& memory();
  const MainMemory& memory() const;
  /// Commits the host memory a run's first launches touch: the first `ldm_bytes_per_core` of each local store they
  /// use (the launch workers', which groups run alone borrow; docs/architecture.md) and the first `main_bytes` of its
  /// first core group's memory window, returning early once `stop` is set. For a thread that would otherwise idle (the
  /// CLI's helper during an ONNX import) while no launch runs and nothing else touches the machine; results never
  /// depend on it (contents are unchanged).
  void prefault_host_memory(std::size_t ldm_bytes_per_core, std::uint64_t main_bytes, const std::atomic<bool>& stop);

  // ---- launching ----
  /// Runs kernel(core, args...) on every core of the chosen groups. Arguments are copied.
  template <typename F, typename... Args>
  Launch launch(LaunchSpec spec, F&& kernel, Args&&... args) {
    return launch_kernel(std::move(spec),
                         [fn = std::forward<F>(kernel), tup = std::make_tuple(std::forward<Args>(args)...)](
                             Core& core) { std::apply([&](const auto&... a) { std::invoke(fn, core, a...); }, tup); });
  }
  template <typename F, typename... Args>
  Launch launch(AllGroupsTag, F&& kernel, Args&&... args) {
    return launch(LaunchSpec{}, std::forward<F>(kernel), std::forward<Args>(args)...);
  }
  Launch launch_kernel(LaunchSpec spec, Kernel kernel);
  /// Runs `control` as this machine's control core and returns when it has, throwing what it threw: on the host
  /// thread that runs the machine's first launch worker, so the launches `control` makes (and joins) run there
  /// without a handoff between host threads. Nothing simulated changes. `poll`, when given, runs on the calling
  /// thread about every `every` while `control` runs, for what must be read there (Python's Ctrl-C); it must not
  /// throw (if it does, the run still ends first, then that is thrown). Without launch workers (a context of a
  /// ConcurrentMachine), and when already `control` of this machine or of a group view sharing its workers,
  /// `control` runs on the calling thread and `poll` never runs. A launch `control` leaves unjoined ends when it
  /// returns. std::logic_error during a launch.
  void run_control(const std::function<void()>& control, const std::function<void()>& poll = {},
                   std::chrono::milliseconds every = std::chrono::milliseconds(50));

  // ---- core-group views and ordering (the executor's split runs, docs/splitting.md) ----
  /// A Machine that sees only `groups` of this one, renumbered 0..k-1: its arch has k core groups, its launches
  /// run on those groups, AllocOptions::cg = i allocates in groups[i]'s memory, and its stats are those groups'.
  /// It shares this machine's clocks, stats, memory, trace and launch flags (one launch at a time across both, but
  /// for the control cores of run_group_controls, one per group);
  /// faults and the trace name the node's groups. It must not outlive this machine.
  std::unique_ptr<Machine> group_view(std::vector<int> groups);
  /// Runs controls[i] as the control core of core group groups[i] (distinct groups of this machine), several at
  /// once when the machine has several host threads: each on the thread that runs its group's launches. A control
  /// may launch only on a group view of its own group (std::logic_error otherwise), may allocate only in that group's
  /// memory and must not share host data unlocked; a launch it leaves unjoined ends when it returns (its fault stays
  /// with its Launch handle, for whoever joins it later); controls do not nest
  /// (std::logic_error). Simulated results never depend on the thread
  /// count (each group has its own clock, engine and trace). Every control runs to its end; then the first
  /// exception, in the order of `controls`, is thrown. They run one after another on a context of a shared node,
  /// while checks are on (their records are the control core's), or with one host thread.
  void run_group_controls(const std::vector<int>& groups, std::vector<std::function<void()>> controls);
  /// The next launch on each of `groups` starts no earlier than `cycle`: the control core joined work on other
  /// groups whose results these launches read. The groups idle until then.
  void start_no_earlier(const std::vector<int>& groups, Cycle cycle);
  /// Group `cg`'s clock: where its next launch starts.
  Cycle group_clock(int cg) const;
  /// Back to the simulated state of a new machine of the same arch and options: every allocation freed (the
  /// allocator starts over, so the next run gets the same addresses), clocks, counters, DMA timing state and the
  /// trace cleared. What is kept is the host's: launch threads, fiber stacks and fibers, local-store pages, and
  /// the host state (planning caches), so a run after a reset skips their setup. Local stores keep their bytes
  /// (undefined at a kernel's start, as on hardware). std::logic_error during a launch; ConfigError on a context
  /// of a shared node or a group view.
  void reset();

  // ---- the control core's host state ----
  /// This machine's T (HostState): planning caches and memos that code above the runtime keeps for as long as the
  /// machine lives, instead of per host thread or per process. A group view shares its machine's. Used from the
  /// control core only (never from a kernel: a core has Core::group_state).
  template <typename T>
  T& host_state() {
    return control_state().get<T>();
  }
  /// This machine's T if it was made, else null.
  template <typename T>
  const T* find_host_state() const {
    return control_state().find<T>();
  }

  // ---- results ----
  /// Stats so far (the machine's clocks continue across launches).
  RunStats stats() const;
  /// The trace recorder of each core group.
  std::vector<const TraceRecorder*> trace() const;
  /// Writes the trace file (spilled blocks are copied, not re-encoded); `run_info` is merged into the header
  /// (workload name, ...).
  void write_trace(const std::filesystem::path& file, const nlohmann::json& run_info = {}) const;
  /// write_trace without the check that no launch runs: for a fatal-signal handler when the program crashed in the
  /// middle of a launch (the host thread running it is stopped there); the file holds what was recorded so far.
  void write_trace_after_crash(const std::filesystem::path& file, const nlohmann::json& run_info = {}) const;
  /// Faults and lint warnings recorded so far (lint warnings do not stop a run).
  std::uint64_t lint_warnings() const;

 private:
  friend class Launch;
  friend class ConcurrentMachine;
  explicit Machine(std::unique_ptr<detail::MachineImpl> impl);
  HostState& control_state() const;
  std::unique_ptr<detail::MachineImpl> impl_;
};

}  // namespace ldmsim
