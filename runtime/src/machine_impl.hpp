// Private state of a Machine. The node (main memory and, per core group, its local stores, DMA engine and trace)
// may be shared by several contexts (ConcurrentMachine); each context has its own clocks, stats and fiber stacks
// per group. Everything a group owns is touched only by the host thread running that group.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core_runners.hpp"
#include "launch_workers.hpp"
#include "ldmsim/dma/engine.hpp"
#include "ldmsim/runtime/host_state.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/runtime/stats.hpp"
#include "ldmsim/sim/main_memory.hpp"
#include "ldmsim/trace/recorder.hpp"
#include "physical_core.hpp"
#include "stack_pool.hpp"

namespace ldmsim::detail {

class LaunchState;
class GroupRun;
class ContextSession;
class ContextRaces;

/// A lazily committed host mapping (local stores of a group).
class HostMapping {
 public:
  explicit HostMapping(std::size_t bytes);
  ~HostMapping();
  HostMapping(const HostMapping&) = delete;
  HostMapping& operator=(const HostMapping&) = delete;
  std::byte* data() const { return data_; }

 private:
  std::byte* data_;
  std::size_t bytes_;
};

/// Where the trace recorders spill: MachineOptions::trace_spill_dir, or the system temp directory (TMPDIR).
std::filesystem::path spill_directory(const MachineOptions& options);

/// A core group of the node.
struct GroupState {
  GroupState(const Arch& arch, int cg, MainMemory& memory, const MachineOptions& options, bool shared_cores);

  /// Events, markers and DMA timing state back to those of a new group (Machine::reset).
  void reset(const Arch& arch, MainMemory& memory, const MachineOptions& options);

  int cg;
  HostMapping ldm;  // cores back to back, arch.ldm_bytes each
  TraceRecorder trace;
  std::optional<DmaEngine> engine;  // always set; re-made by reset
  std::vector<PhysicalCore> cores;  // only when several contexts share the node
};

/// The simulated node.
struct NodeState {
  NodeState(Arch arch, MachineOptions options, std::uint32_t contexts);

  Arch arch;
  MachineOptions options;
  unsigned threads;
  MainMemory memory;
  std::uint32_t contexts;
  std::vector<std::unique_ptr<GroupState>> groups;
  /// With MachineOptions::thread_stores, on a node of one context, per launch worker: local stores for one group
  /// (ldm_bytes per core, back to back), lent to every group the worker runs alone (a launch without node sync). A
  /// thread runs one such group at a time, and each host page of local store costs a first touch: T threads' sets
  /// touch T sixths of the pages the groups' own stores would on six groups. Groups run together use their own.
  std::vector<std::unique_ptr<HostMapping>> thread_stores;
  /// Set while ConcurrentMachine::run runs the contexts' programs: launches then run as fibers of its thread.
  ContextSession* session = nullptr;
  /// While ConcurrentMachine::run runs sequentially: the context whose program runs (-1: none). Contexts launch only
  /// inside run(), and a sequential run only from the running program's context, so no two contexts' launches
  /// ever run on different host threads at once (they share the physical cores, engines and trace).
  int sequential_context = -1;
  /// With checking on in a pipelined run: every context's requests, for races between them (made by the first
  /// launch that checks; dropped at each ConcurrentMachine::run).
  std::shared_ptr<ContextRaces> context_races;
};

/// One context's side of a core group: its clock and stats, and its cores' fiber stacks and fibers.
struct GroupContext {
  GroupContext(GroupState& shared, const Arch& arch, const MachineOptions& options);
  ~GroupContext();
  GroupContext(const GroupContext&) = delete;
  GroupContext& operator=(const GroupContext&) = delete;

  GroupState& shared;
  GroupStats stats;
  StackPool stacks;
  CoreRunners runners;                  // on a node of one context: the cores' fibers, kept between launches
  std::unique_ptr<GroupRun> spare_run;  // the last launch's run, set up afresh by the next (GroupRun::take)
};

class MachineImpl {
 public:
  /// A machine of its own (one context on a node nobody else uses).
  MachineImpl(Arch arch, MachineOptions options);
  /// Context `context` of a shared node, seeing `arch` (the node's with its ldm share).
  MachineImpl(std::shared_ptr<NodeState> node, Arch arch, std::uint32_t context, std::string label);
  /// A view of `parent` that sees only `groups` (node group numbers), renumbered from 0; it shares the parent's
  /// group contexts (clocks, stats, stacks) and its launch flag.
  MachineImpl(const MachineImpl& parent, std::vector<int> groups);

  /// Throws std::logic_error if a launch is in flight (the control core must join before touching state).
  void require_idle(const char* what) const;
  /// Throws ConfigError when this context of a shared node may not launch now (see NodeState::sequential_context).
  void require_launchable() const;
  /// Joins a launch left unjoined (its fault stays with its Launch handle).
  void join_active_launch();
  /// The node group behind this machine's group `cg` (ConfigError when there is none).
  int physical_group(int cg) const;
  /// The part of each core's store this context owns.
  LdmWindow ldm_window() const { return {context * arch.ldm_bytes, arch.ldm_bytes}; }
  /// The launch's name as the trace and faults show it (prefixed with the context's label on a shared node).
  std::string launch_name(const std::string& name) const { return label.empty() ? name : label + ":" + name; }

  std::shared_ptr<NodeState> node;
  Arch arch;  // as this context sees it
  const MachineOptions& options;
  unsigned threads;
  MainMemory& memory;
  std::uint32_t context = 0;
  std::string label;
  /// The host threads running launches, shared with group views; null on a node of several contexts (their
  /// launches make their threads and fibers per launch, some inside a ContextSession's thread).
  std::shared_ptr<LaunchWorkers> workers;
  std::vector<std::shared_ptr<GroupContext>> groups;
  /// Per node group: set while a launch of this machine, or of a view sharing its groups, runs on it. The control
  /// core waits for every group (a launch reads the memory's maps unlocked); group controls (concurrent memory,
  /// Machine::run_group_controls) each for their own, and each sets and reads only its groups'.
  std::shared_ptr<std::vector<std::uint8_t>> launch_active;
  std::weak_ptr<LaunchState> active_launch;  // joined by ~Machine if the user never did
  /// The control core's host state (Machine::host_state), shared with group views.
  std::shared_ptr<HostState> host_state = std::make_shared<HostState>(true);
  /// The compute cores' host state (Core::group_state), one per host thread of a launch (the i-th thread of every
  /// launch uses the i-th), kept across launches and shared with group views. Grown by the control core before a
  /// launch's threads start.
  std::shared_ptr<std::vector<std::unique_ptr<HostState>>> thread_states =
      std::make_shared<std::vector<std::unique_ptr<HostState>>>();
  /// The i-th thread's state (made if needed); control core only.
  HostState& thread_state(std::size_t i);
  /// A group view (made by Machine::group_view) rather than a machine of its own.
  bool is_view = false;
};

/// The node core group whose control (Machine::run_group_controls) this thread runs now, or -1.
int current_group_control();
/// Notes a launch made by the group control this thread runs, so that it ends when the control returns even if
/// its Launch handle left the control unjoined.
void note_group_control_launch(const std::shared_ptr<LaunchState>& launch);

/// Writes the node's trace file: every group's recorder, `header` completed with the arch and `cycles`.
void write_node_trace(const NodeState& node, const std::filesystem::path& file, nlohmann::json header, Cycle cycles);

}  // namespace ldmsim::detail
