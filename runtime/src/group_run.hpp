// One core group executing one launch on one host thread: creates a fiber per compute core, keeps them in
// simulated-time order, implements barriers, detects deadlock and collects faults. Owned by the launch.
#pragma once

#include <spdlog/logger.h>

#include <boost/fiber/condition_variable.hpp>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check_state.hpp"
#include "ldmsim/runtime/core.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/fault.hpp"
#include "lint_state.hpp"
#include "machine_impl.hpp"
#include "node_sync.hpp"
#include "scheduler.hpp"

namespace ldmsim::detail {

/// Thrown inside a fiber to unwind it after another core of its group trapped. Not a std::exception, so a
/// kernel's `catch (const std::exception&)` does not swallow it.
struct Aborted {};

class GroupRun {
 public:
  /// `node` is the launch's node-wide barrier when its groups run together (LaunchSpec::node_sync), else null.
  /// `cg`: the group's number on `machine` (a group view renumbers the node's groups; cg() is the node's).
  GroupRun(MachineImpl& machine, GroupContext& group, int cg, const Kernel& kernel, std::string name, NodeSync* node);
  GroupRun(const GroupRun&) = delete;
  GroupRun& operator=(const GroupRun&) = delete;
  /// A run for a launch of `group`: the group's spare (the run of its last launch, its cores' blocks and notes
  /// still allocated and warm in the host's caches) set up afresh, else a new one.
  static std::unique_ptr<GroupRun> take(MachineImpl& machine, GroupContext& group, int cg, const Kernel& kernel,
                                        std::string name, NodeSync* node);
  /// Hands a finished run back to its group as the spare for the next launch.
  static void give_back(std::unique_ptr<GroupRun> run);

  /// Runs every core to completion on the calling host thread (which must use CycleOrderedScheduler).
  /// Never throws: problems become faults.
  void run(HostState& host_state) noexcept { run_together({this}, host_state); }
  /// Runs several groups' cores as fibers of the calling thread, interleaved in simulated-time order, until all
  /// of them finish. Deadlock is declared when no core of any of them can proceed.
  /// `host_state`: the calling thread's (Core::group_state). With `workers`, the calling thread is launch worker
  /// `worker` and the cores run on their groups' kept fibers (CoreRunners), made there if need be.
  static void run_together(const std::vector<GroupRun*>& runs, HostState& host_state,
                           const std::shared_ptr<LaunchWorkers>& workers = nullptr, int worker = -1) noexcept;
  /// The parts of run_together, for launches whose fibers share a thread with other work (ConcurrentMachine):
  /// start creates the cores' fibers; `on_exit` is called when the last of them has exited; finish joins them and
  /// closes the launch on the group's clock. `host_state`: the host thread's (Core::group_state).
  /// With `workers`, the cores run on the group's kept fibers, made on launch worker `worker` (the calling thread)
  /// if need be; without, on fibers made for this launch.
  void start(std::function<void()> on_exit, HostState& host_state,
             const std::shared_ptr<LaunchWorkers>& workers = nullptr, int worker = -1) noexcept;
  /// Before start: the cores use `stores` (laid out as the group's own: the node's ldm_bytes per core, back to
  /// back) for this launch instead of the group's own stores. Contents at a kernel's start are undefined either way.
  void use_stores(std::byte* stores);
  /// The group's kept fibers.
  CoreRunners& runners() { return group_.runners; }
  void finish() noexcept;
  bool live() const { return live_ > 0; }
  /// The latest clock of any of its cores.
  Cycle latest_cycle() const;
  /// Every core of `together` (the groups run with this one) is blocked: records a deadlock listing them all.
  void on_deadlock(const std::vector<GroupRun*>& together);
  /// The first fault of this group in (cycle, core) order, if any.
  const std::optional<Fault>& fault() const { return first_fault_; }
  /// A failure of the host while the group ran (a trace spill write), which is no fault of the program; null if none.
  const std::exception_ptr& host_error() const { return host_error_; }
  int cg() const { return group_.shared.cg; }

  // ---- used by Core ----
  const Arch& arch() const { return machine_->arch; }
  std::size_t dma_channels() const { return dma_channels_; }
  const std::string& kernel_name() const { return name_; }
  bool aborted() const { return aborted_; }
  DmaEngine& engine() { return *group_.shared.engine; }
  const MainMemory& memory() const { return machine_->memory; }
  /// The part of each core's store the launch's context owns.
  LdmWindow ldm_window() const { return machine_->ldm_window(); }
  spdlog::logger& dma_log() const { return *dma_log_; }
  /// The group's checks (docs/checking.md), null when the machine checks nothing.
  GroupCheck* checks() const { return checks_; }
  /// Other core groups run in this launch: the checks keep its requests for the sweep across groups at the join.
  void share_launch_with_groups() { with_groups_ = true; }
  void barrier(Core& core, Scope scope);
  void reg_put(Core& core, RegBus bus, int dst, const RegValue& value);
  RegValue reg_get(Core& core, RegBus bus);
  Cycle rma(Core& core, const RmaRequest& request);
  void block_until(Core& core, const std::function<bool()>& ready, const std::string& what);
  /// Stops every core of the group (they unwind with Aborted at their next API call or wake-up). Cores waiting
  /// at a node barrier are woken by NodeSync::abort_all, which calls this for every group: use that in a node launch.
  void abort();
  /// A core waiting at the node barrier resumes at `release` (called by NodeSync).
  void wake_from_node_barrier(int core, Cycle release);
  void mark_node_barrier(Cycle release);
  void notify_waiters(Cycle at);
  /// ConcurrentMachine: `core` stalls (gives its physical core up) / takes its physical core back.
  void release_core(Core& core);
  void take_core(Core& core);
  /// `core` stalls until `until` but keeps its physical core (PhysicalCore::idle).
  void idle_core(Core& core, Cycle until);
  /// On a shared node: `core` waits for its DMA until `until` (PhysicalCore::dma_wait); nothing otherwise.
  void dma_wait(Core& core, Cycle until);
  /// Records a fault raised by a core and aborts the group.
  void record_fault(const Fault& fault);
  /// Keeps the exception being handled (a TraceSpillError) as the group's host error and aborts the group.
  void record_host_error();
  /// Records a lint warning (an alignment violation the lint policy let through) of call `api` (`field`: a DMA
  /// request's first bad field): a trace marker each time, a log line (and a new lint site) the first time per site.
  /// `code_site`: the kernel code the warning is about (code_site.hpp), 0 when not known; a site the core's layer
  /// set (set_lint_code_site) takes precedence.
  /// `buffer`: the allocation the request's main-memory side starts in (" [main memory: ...]"), put before the hint
  /// unless the layer's site names the buffers itself.
  void record_warning(const Core& core, std::string_view api, std::string_view field, const std::string& message,
                      std::uint64_t code_site = 0, std::string_view buffer = {});

 private:
  friend class CoreRunners;  // runs run_core on a kept fiber
  enum class State : std::uint8_t { kReady, kAtBarrier, kAtRegGet, kAtRegPut, kAtCondition, kAtCore, kExited };
  struct Slot {
    std::uint32_t expected = 0;
    std::uint32_t arrived = 0;
    Cycle latest_arrival = 0;
    Cycle release = 0;
    std::uint64_t generation = 0;
    std::vector<int> waiting;
    boost::fibers::condition_variable_any released;
  };
  /// Runs `step`, turning a simulator exception into a fault of the group.
  template <typename Step>
  void guarded(Step&& step) noexcept;
  /// Notifies every condition a core of this group can block on (after an abort, so they unwind).
  void wake_blocked();
  void node_barrier(Core& core);
  void run_core(int id) noexcept;
  Slot& slot_for(const Core& core, Scope scope);
  /// One line per core of this group: its state, for the deadlock dump; raises `latest` to the latest clock.
  std::string core_states(bool name_group, Cycle& latest) const;

  /// Sets every piece of launch state for a launch of `kernel` (the constructor's, and take()'s on a spare):
  /// a spare keeps only its allocations.
  void begin(MachineImpl& machine, int cg_seen, const Kernel& kernel, std::string name, NodeSync* node);

  std::byte* stores_ = nullptr;  // the local stores this launch uses (the group's own unless use_stores)
  MachineImpl* machine_;         // the launching machine (a view of the group's machine launches through itself)
  GroupContext& group_;
  const Kernel* kernel_;
  std::string name_;
  NodeSync* node_;
  bool with_groups_ = false;
  Cycle start_cycle_ = 0;
  CheckState* check_state_ = nullptr;  // the machine's checks when enabled
  GroupCheck* checks_ = nullptr;
  LintGroup* lint_ = nullptr;               // the machine's lint sites of this group
  std::vector<std::uint64_t> node_passes_;  // node barriers each core passed (the first to pass one sweeps)
  std::uint64_t node_sweeps_ = 0;
  std::vector<boost::fibers::fiber> fibers_;  // empty when the cores run on kept fibers
  /// The launch's cores, constructed in one block (one allocation per launch instead of one per core).
  class CoreBlock {
   public:
    explicit CoreBlock(std::size_t n) : storage_(std::make_unique_for_overwrite<Storage[]>(n)), kept_(n) {
      cores_.reserve(n);
    }
    ~CoreBlock() { clear(); }
    CoreBlock(const CoreBlock&) = delete;
    CoreBlock& operator=(const CoreBlock&) = delete;
    /// Destroys every core, keeping the storage and what each core's launch grew (Core::Storage) for the next core
    /// in its place; not lists a rare launch grew far beyond a kernel's usual few entries (kept for the machine's
    /// life, they would hold that peak for every core).
    void clear() {
      constexpr std::size_t kMostKept = 64;
      for (std::size_t i = cores_.size(); i-- > 0;) {
        Core::Storage& kept = kept_[i] = cores_[i]->take_storage();
        if (kept.pending.capacity() > kMostKept) kept.pending = {};
        if (kept.ldm_blocks.capacity() > kMostKept) kept.ldm_blocks = {};
        cores_[i]->~Core();
      }
      cores_.clear();
    }
    std::size_t capacity() const { return cores_.capacity(); }
    /// Where the next core goes; add() it once constructed there.
    void* next() { return &storage_[cores_.size()]; }
    Core& add(Core* core) {
      core->adopt_storage(std::move(kept_[cores_.size()]));
      return *cores_.emplace_back(core);
    }
    std::size_t size() const { return cores_.size(); }
    Core* operator[](std::size_t i) const { return cores_[i]; }
    auto begin() const { return cores_.begin(); }
    auto end() const { return cores_.end(); }

   private:
    struct Storage {
      alignas(Core) std::byte bytes[sizeof(Core)];
    };
    std::unique_ptr<Storage[]> storage_;
    std::vector<Core::Storage> kept_;  // per slot: the last core's storage
    std::vector<Core*> cores_;
  };
  CoreBlock cores_;
  std::vector<State> states_;
  struct BarrierNote {  // what a core waits for, formatted only for the deadlock dump
    Scope scope = Scope::kGroup;
    Cycle arrival = 0;
    std::uint32_t arrived = 0;
    std::uint32_t expected = 0;
  };
  std::vector<BarrierNote> barrier_notes_;
  // Register communication: per core and bus, the values sent to it and not yet received.
  struct RegMessage {
    RegValue value;
    Cycle arrival = 0;  // receivable from this cycle on
    int from = 0;
  };
  /// First in, first out, allocating nothing until the first send (a launch builds two per core; few kernels use
  /// register communication, and a std::deque allocates as it is built).
  class RegFifo {
   public:
    std::size_t size() const { return items_.size() - head_; }
    bool empty() const { return size() == 0; }
    const RegMessage& front() const { return items_[head_]; }
    void push_back(const RegMessage& m) { items_.push_back(m); }
    void pop_front() {
      if (++head_ == items_.size()) {
        items_.clear(), head_ = 0;
      } else if (head_ >= 64 && 2 * head_ >= items_.size()) {  // never drained: drop the taken half
        items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }

   private:
    std::vector<RegMessage> items_;
    std::size_t head_ = 0;
  };
  struct RegQueue {
    RegFifo values;
    Cycle last_get = 0;                             // when the receiver last took a value (frees a buffer entry)
    boost::fibers::condition_variable_any changed;  // a value arrived or was taken
  };
  struct RegNote {  // what a blocked core waits for, for the deadlock dump
    RegBus bus = RegBus::kRow;
    Cycle since = 0;
    int peer = -1;  // the receiver a put waits for
  };
  /// Blocks `core` (shown as `state` in the deadlock dump) until done() holds, re-checked at each notify.
  void block(Core& core, State state, boost::fibers::condition_variable_any& changed,
             const std::function<bool()>& done);
  /// Made on the first register put or get of the launch (most kernels use none).
  RegQueue& reg_queue(int core, RegBus bus) {
    if (!reg_queues_) reg_queues_ = std::make_unique<RegQueue[]>(reg_queue_count_);
    return reg_queues_[static_cast<std::size_t>(2 * core) + static_cast<std::size_t>(bus)];
  }
  void wake(int core, Cycle at);
  std::unique_ptr<RegQueue[]> reg_queues_;  // two per core (condition variables do not move); null until used
  std::size_t reg_queue_count_ = 0;
  std::vector<RegNote> reg_notes_;
  // block_until: what each blocked core waits for, and the condition variable every notify wakes.
  std::vector<std::string> condition_notes_;
  boost::fibers::condition_variable_any condition_changed_;
  std::deque<Slot> slots_;  // group, then one per row, then one per column
  int live_ = 0;
  std::function<void()> on_exit_;
  bool aborted_ = false;
  std::optional<Fault> first_fault_;
  std::exception_ptr host_error_;
  std::shared_ptr<spdlog::logger> dma_log_;  // looked up once per launch, not per request
  std::size_t dma_channels_ = 1;             // the timing model's "channels", looked up once per launch
};

}  // namespace ldmsim::detail
