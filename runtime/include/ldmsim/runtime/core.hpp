// The kernel-side API: what a kernel running on one compute core sees. Identity, its local store, DMA
// get/put (PE, BCAST, ROW; contiguous or strided) with completion handles, barriers and a cycle counter.
// Every call that interacts with the group yields to the cycle-ordered scheduler, so requests reach the DMA
// engine in simulated-time order. Violations raise ldmsim::Fault.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/runtime/device_ptr.hpp"
#include "ldmsim/runtime/host_state.hpp"
#include "ldmsim/runtime/ldm_span.hpp"
#include "ldmsim/runtime/stats.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/compute_model.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/local_store.hpp"

namespace ldmsim {

namespace detail {
class GroupRun;
class CoreOrder;
class PhysicalCore;
}  // namespace detail

class Core;

/// Which cores a barrier waits for.
/// kNode: every core of every group of the launch (needs LaunchSpec::node_sync).
enum class Scope : std::uint8_t { kGroup = 0, kRow = 1, kCol = 2, kNode = 3 };

/// The bus of a register transfer (SW26010 register communication): the sender's row or column.
enum class RegBus : std::uint8_t { kRow = 0, kCol = 1 };

/// One register-communication value: 256 bits.
struct RegValue {
  std::array<std::byte, 32> bytes{};
};

/// RMA (SW26010-Pro): a put copies local ldm bytes to a peer's ldm (or, with a row / column scope, to the same
/// offset of every core of this row / column / group, this core included), a get copies a peer's bytes into this
/// ldm.
enum class RmaOp : std::uint8_t { kPut, kGet };
enum class RmaScope : std::uint8_t { kCore, kRow, kCol, kGroup };
struct RmaRequest {
  RmaOp op = RmaOp::kPut;
  RmaScope scope = RmaScope::kCore;
  int peer = 0;        ///< core id in the group (kCore)
  LdmAddr local = 0;   ///< this core's ldm offset
  LdmAddr remote = 0;  ///< the peer's (or every receiver's) ldm offset
  std::uint64_t bytes = 0;
  const char* api = "Core::rma";
  bool move_data = true;  ///< false: only price it (a caller that delivers the bytes itself at the landing cycle)
};

/// Work charged to a core: flops at the arch's flops_per_cycle, plus raw cycles.
struct Cost {
  std::uint64_t flops = 0;
  Cycle cycles = 0;
};

/// Completion handle of one DMA request; must be waited before the kernel returns.
class [[nodiscard]] DmaHandle {
 public:
  DmaHandle() = default;
  /// Waits for this request (Core::wait).
  void wait() const;
  Cycle completion() const { return end_; }
  std::uint64_t id() const { return id_; }

 private:
  friend class Core;
  DmaHandle(Core* core, std::uint64_t id, Cycle end) : core_(core), id_(id), end_(end) {}
  Core* core_ = nullptr;
  std::uint64_t id_ = 0;
  Cycle end_ = 0;
};

/// A core's local store: typed allocation with traps on overflow, plus the raw bytes.
class Ldm {
 public:
  static constexpr std::size_t kDefaultAlignment = 32;

  /// Allocates n elements (traps ldm-overflow with requested / free / high-water bytes when it does not fit).
  template <typename T>
  LdmSpan<T> alloc(std::size_t n, std::size_t alignment = kDefaultAlignment) {
    static_assert(std::is_trivially_copyable_v<T>, "ldm holds trivially copyable data");
    const LdmAddr at = alloc_bytes(n * sizeof(T), alignment < alignof(T) ? alignof(T) : alignment);
    return LdmSpan<T>(reinterpret_cast<T*>(base_ + at), at, n);
  }
  template <typename T>
  void free(LdmSpan<T> span) {
    free_at(span.ldm_addr());
  }
  /// Allocates raw bytes, returning the ldm offset.
  LdmAddr alloc_bytes(std::size_t bytes, std::size_t alignment = kDefaultAlignment);
  /// Frees the allocation at `offset` (traps invalid-argument when there is none).
  void free_at(LdmAddr offset);
  /// Frees every allocation.
  void reset();

  std::uint64_t capacity() const { return allocator_.capacity(); }
  std::uint64_t used() const { return allocator_.used(); }
  std::uint64_t high_water() const { return allocator_.high_water(); }
  /// Host view of ldm byte `offset` (for kernels that address the store directly).
  std::byte* bytes(LdmAddr offset = 0) const { return base_ + offset; }

 private:
  friend class Core;
  Ldm(Core* core, std::byte* base, std::uint64_t capacity) : core_(core), base_(base), allocator_(capacity) {}
  Core* core_;
  std::byte* base_;
  LdmAllocator allocator_;
};

/// One compute core during a launch. Passed to the kernel by reference; valid only inside the kernel.
class Core {
 public:
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  /// The core group as the launching Machine numbers it (a group view numbers its groups from 0).
  int cg() const { return cg_; }
  /// The core group on the node (faults and the trace name this one).
  int node_cg() const { return node_cg_; }
  /// cg-local core id = row * cols + col.
  int id() const { return id_; }
  int rank() const { return id_; }
  int row() const { return row_; }
  int col() const { return col_; }
  int rows() const;
  int cols() const;
  int group_size() const;
  /// This core's simulated clock.
  Cycle cycle() const { return cycle_; }
  const std::string& kernel() const;
  const Arch& arch() const;
  /// Requests the group's DMA engine serves at once: the timing model's "channels" parameter, 1 when it has none
  /// (tiling cuts big reads into that many pieces).
  std::size_t dma_channels() const;
  Ldm& ldm();

  /// Issues a fully general request (api names the caller in diagnostics). `site` is the code that issued it:
  /// checking reports, lint warnings and traps name its file and line (the default, the caller's line, costs one
  /// pointer; a default-constructed location names none). The same holds for every request call below.
  DmaHandle dma(const DmaRequest& request, std::source_location site = std::source_location::current());

  /// Contiguous PE-mode get of dst.size() elements.
  template <typename T>
  DmaHandle get(LdmSpan<T> dst, std::type_identity_t<DevicePtr<const T>> src,
                std::source_location site = std::source_location::current()) {
    return dma(make(DmaOp::kGet, DmaMode::kPe, src.addr(), dst.ldm_addr(), dst.size_bytes(), 0, 0, "Core::get"), site);
  }
  /// Contiguous PE-mode put of src.size() elements.
  template <typename T>
  DmaHandle put(DevicePtr<T> dst, std::type_identity_t<LdmSpan<const T>> src,
                std::source_location site = std::source_location::current()) {
    return dma(make(DmaOp::kPut, DmaMode::kPe, dst.addr(), src.ldm_addr(), src.size_bytes(), 0, 0, "Core::put"), site);
  }
  /// Strided get: blocks of bsize bytes in main memory, `stride` bytes skipped between blocks, packed in ldm.
  template <typename T>
  DmaHandle get_strided(LdmSpan<T> dst, std::type_identity_t<DevicePtr<const T>> src, std::size_t bsize_bytes,
                        std::size_t stride_bytes, std::source_location site = std::source_location::current()) {
    return dma(make(DmaOp::kGet, DmaMode::kPe, src.addr(), dst.ldm_addr(), dst.size_bytes(), bsize_bytes, stride_bytes,
                    "Core::get_strided"),
               site);
  }
  /// Strided put: packed ldm data scattered to blocks of bsize bytes, `stride` bytes skipped between blocks.
  template <typename T>
  DmaHandle put_strided(DevicePtr<T> dst, std::type_identity_t<LdmSpan<const T>> src, std::size_t bsize_bytes,
                        std::size_t stride_bytes, std::source_location site = std::source_location::current()) {
    return dma(make(DmaOp::kPut, DmaMode::kPe, dst.addr(), src.ldm_addr(), src.size_bytes(), bsize_bytes, stride_bytes,
                    "Core::put_strided"),
               site);
  }
  /// BCAST get: fills the same ldm range of every core of the group whose row bit is set in row_mask.
  template <typename T>
  DmaHandle bcast_get(LdmSpan<T> dst, std::type_identity_t<DevicePtr<const T>> src, std::uint32_t row_mask = ~0u,
                      std::source_location site = std::source_location::current()) {
    DmaRequest r =
        make(DmaOp::kGet, DmaMode::kBcast, src.addr(), dst.ldm_addr(), dst.size_bytes(), 0, 0, "Core::bcast_get");
    r.row_mask = row_mask;
    return dma(r, site);
  }
  /// ROW get: fills the same ldm range of every core of this core's row.
  template <typename T>
  DmaHandle row_get(LdmSpan<T> dst, std::type_identity_t<DevicePtr<const T>> src,
                    std::source_location site = std::source_location::current()) {
    return dma(make(DmaOp::kGet, DmaMode::kRow, src.addr(), dst.ldm_addr(), dst.size_bytes(), 0, 0, "Core::row_get"),
               site);
  }

  /// Makes this core's copies of `span` that BCAST/ROW gets with DmaRequest::replicate_on_read still owe it; a
  /// kernel that issues such gets reads their buffers on the receiving cores only after this call (or through
  /// readable_ldm).
  template <typename T>
  void ready_ldm(LdmSpan<T> span) {
    ready_ldm_bytes(span.ldm_addr(), span.size_bytes());
  }
  void ready_ldm_bytes(std::uint64_t ldm_offset, std::uint64_t bytes);
  /// `span` for reading right away, instead of ready_ldm and reading `span`: the same elements, read where they
  /// already are (the first receiver's store while this core's copy is still owed, so that copy is never made).
  /// Valid until this core next issues a request, waits or meets a barrier (anything that lets another core run).
  template <typename T>
  LdmSpan<const T> readable_ldm(LdmSpan<T> span) {
    const std::byte* at = readable_ldm_bytes(span.ldm_addr(), span.size_bytes());
    return LdmSpan<const T>(reinterpret_cast<const T*>(at), span.ldm_addr(), span.size());
  }
  const std::byte* readable_ldm_bytes(std::uint64_t ldm_offset, std::uint64_t bytes);

  /// Engine time the group's timing model would charge a PE get of `length` bytes from `src` (strided when
  /// bsize > 0), without issuing it: lets a kernel pick the cheaper of two ways to read the same data.
  double get_service_cycles(DeviceAddr src, std::size_t length, std::size_t bsize = 0, std::size_t stride = 0) const;

  /// Moves this core's clock to the request's completion (no-op if already waited).
  void wait(const DmaHandle& handle);
  /// Waits for every outstanding request of this core.
  void wait_all();
  /// Requests issued and not yet waited.
  std::size_t pending_dma() const { return pending_.size(); }

  /// Blocks until every core of the scope arrives; all leave at the latest arrival plus the barrier cost.
  void barrier(Scope scope = Scope::kGroup);
  /// Register communication (arch register_communication): sends `value` over this core's row bus (to the
  /// core of this row in column `dst`) or column bus (to row `dst`); dst == cols (row bus) or rows (column
  /// bus) sends to every other core of the row or column. Blocks while a receiver's buffer is full. Traps on
  /// an arch without register communication, a bad dst or a put to itself.
  void reg_put(RegBus bus, int dst, const RegValue& value);
  /// Receives the oldest value on this core's row (or column) bus, blocking until one arrives; a get no put
  /// will ever answer ends in the group's deadlock trap.
  RegValue reg_get(RegBus bus);
  /// RMA (arch rma): moves the bytes now and returns the cycle they have landed at every receiver (also when the
  /// operation completes for this core, which is not charged here: wait with wait_until). Traps on an arch
  /// without RMA, bad sizes, misaligned or out-of-range offsets and bad peers.
  Cycle rma(const RmaRequest& request);
  /// The cores an RMA put of `scope` from this core writes (kCore: `peer`).
  std::vector<int> rma_receivers(RmaScope scope, int peer) const;
  /// Blocks until ready() holds, re-checked whenever a core of the group calls notify_waiters(); `what`
  /// describes the wait in the deadlock dump when no core can make it true.
  void block_until(const std::function<bool()>& ready, const std::string& what);
  /// Wakes the cores blocked in block_until to re-check their condition.
  void notify_waiters();
  /// Moves this core's clock to `cycle` if that is later (waiting, counted as a synchronisation wait).
  void wait_until(Cycle cycle);
  /// Charges computation: flops / flops_per_cycle (rounded up) plus cost.cycles.
  void compute(Cost cost);
  /// Charges vector work through the arch's compute model (ComputeModel::cycles).
  void compute(const KernelWork& work);
  /// The T (HostState) this core's group shares with the other groups its host thread runs in a launch: the kernels'
  /// host memos and scratch, one set per thread slot, kept for the machine's life. Never used by two threads at once,
  /// so no locks, but a value may change at any yield (any call that interacts with the group).
  template <typename T>
  T& group_state() {
    return group_state_->get<T>();
  }
  /// Records a lint warning at the core's cycle (counted in its stats, marked in the trace, logged): something the
  /// hardware tolerates but that costs or is easy to get wrong (e.g. a misaligned vector load from ldm).
  void lint(const std::string& message);

 private:
  friend class detail::GroupRun;
  friend class Ldm;
  /// Ldm::free: copies owed to [ldm_offset, ldm_offset + bytes) dropped, copies owed from there made.
  void forget_ldm(std::uint64_t ldm_offset, std::uint64_t bytes);
  struct Pending {
    std::uint64_t id;
    Cycle end;
    DmaRequest request;
  };
  /// Host storage a core's launch grows (its requests in flight, its ldm blocks), kept by the launch's group for the
  /// core of the next launch in its place, which reuses it instead of growing its own.
  struct Storage {
    std::vector<Pending> pending;
    std::vector<LdmAllocator::Block> ldm_blocks;
  };
  /// Hands this core's storage over (emptied); the core is done (GroupRun destroys it next).
  Storage take_storage();
  /// Takes `storage` over for this new core (before its kernel runs).
  void adopt_storage(Storage storage);

  Core(detail::GroupRun& group, int cg, int node_cg, int id, int row, int col, std::byte* ldm_base,
       std::uint64_t ldm_bytes, CoreStats& stats);
  static DmaRequest make(DmaOp op, DmaMode mode, DeviceAddr main, LdmAddr ldm, std::size_t length, std::size_t bsize,
                         std::size_t stride, const char* api) {
    DmaRequest r;
    r.op = op;
    r.mode = mode;
    r.main = main;
    r.ldm = ldm;
    r.length = length;
    r.bsize = bsize;
    r.stride = stride;
    r.api = api;
    return r;
  }
  void enter(std::string_view api);  // checks the core is inside its kernel and the launch is not aborted
  void sync_point();                 // publishes this core's clock and yields to earlier cores
  void check_exit();                 // traps when the kernel returns with requests it never waited for
  // Contexts sharing the node (ConcurrentMachine): a core holds its physical core from a resume to a stall.
  void release_core();  // the core stalls: another context may run on the physical core
  void resume();        // after a stall: takes the physical core back (in simulated-time order)
  void stall_until(Cycle cycle, Cycle CoreStats::*counter);  // a wait that moves the clock to `cycle`
  void use_ldm(std::byte* base) { ldm_.base_ = base; }       // before the kernel runs (GroupRun::use_stores)
  [[noreturn]] void trap(FaultKind kind, std::string message, std::optional<FaultField> field = std::nullopt);

  detail::GroupRun* group_;
  int cg_;
  int node_cg_;
  int id_;
  int row_;
  int col_;
  Cycle cycle_ = 0;
  Ldm ldm_;
  CoreStats* stats_;
  HostState* group_state_;
  detail::CoreOrder* order_ = nullptr;
  std::uint32_t order_id_ = 0;                // this core's key in the scheduler, unique on the host thread
  detail::PhysicalCore* physical_ = nullptr;  // null unless contexts share the node
  bool holding_ = false;                      // holds physical_ (between a resume and a stall)
  Cycle rma_issue_free_ = 0;                  // this core's RMA engine: next free issue slot and link
  Cycle rma_link_free_ = 0;
  std::vector<Pending> pending_;
  std::uint64_t next_request_id_ = 1;
  // This core's fiber stack: code running on the core's own fiber has its frames inside it, so a frame address
  // outside tells a call from another core or host thread without asking Boost (a TLS lookup per call).
  std::uintptr_t stack_low_ = 0;
  std::uintptr_t stack_high_ = 0;
  bool in_kernel_ = false;
};

inline void DmaHandle::wait() const {
  if (core_ != nullptr) core_->wait(*this);
}

}  // namespace ldmsim
