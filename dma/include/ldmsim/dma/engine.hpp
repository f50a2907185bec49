// The DMA engine of one core group: validates a request (nothing moves on a violation), asks the timing
// model when it completes, moves the bytes between main memory and the cores' local stores (PE, BCAST, ROW;
// contiguous or strided) and records the trace event.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "ldmsim/dma/deferred_copies.hpp"
#include "ldmsim/dma/event.hpp"
#include "ldmsim/dma/request.hpp"
#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/dma/validation.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim {

/// The outcome of one request.
struct DmaResult {
  DmaTiming timing;
  /// Set when the request trapped (nothing moved) or, under lint, when it broke the alignment rule and moved.
  std::optional<DmaViolation> violation;
  bool trapped = false;
  bool remote = false;  ///< the main-memory side is in another core group's memory (arch dma.remote priced it)
};

/// The part of every core's local store a request addresses: `bytes` from `offset` (one model's context when
/// several share the machine). Default: the whole store.
struct LdmWindow {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;  ///< 0: arch.ldm_bytes
};

class DmaEngine {
 public:
  /// The engine of core group `cg`. `ldm_base` holds the group's local stores back to back: core i at
  /// ldm_base + i * arch.ldm_bytes. Every request's event goes to `events` (none recorded when it is null).
  /// Without `move_data` requests are checked, timed and recorded but carry no bytes (MachineOptions::move_data).
  DmaEngine(const Arch& arch, int cg, MainMemory& memory, DmaEventSink* events, std::byte* ldm_base,
            bool lint_alignment, bool move_data = true);

  /// Cycles the issuing core spends on the request before it reaches the engine.
  Cycle issue_cycles(const DmaRequest& request) const { return model_->issue_cycles(request); }
  /// Engine time the timing model would charge the request, without scheduling it (TimingModel::service_cycles).
  double service_cycles(const DmaRequest& request) const { return model_->service_cycles(request); }
  /// Validates, times, moves and records a request issued at `issue` by cg-local core `core`, whose ldm
  /// addresses lie in `window` of every core's store (the trace records them relative to the window).
  DmaResult execute(const DmaRequest& request, int core, Cycle issue, LdmWindow window = {});
  /// The copies replicate_on_read gets owe [offset, offset + bytes) of `core`'s physical store, made.
  void make_copies(int core, std::uint64_t offset, std::uint64_t bytes) {
    copies_.before_read(core, offset, offset + bytes);
  }
  /// Where `core` reads [offset, offset + bytes) of its physical store now and sees what eager copies would have
  /// put there: the first receiver's store while the whole range is still owed from it (the copy need not be made,
  /// nor `core`'s pages touched), otherwise its own, the copies owed there made. Valid until a request next writes
  /// either store.
  const std::byte* readable(int core, std::uint64_t offset, std::uint64_t bytes) {
    if (const int source = copies_.sole_source(core, offset, offset + bytes); source >= 0) {
      return ldm_of(source) + offset;
    }
    copies_.before_read(core, offset, offset + bytes);
    return ldm_of(core) + offset;
  }
  /// [offset, offset + bytes) of `core`'s physical store about to be written other than by a get (an RMA): its
  /// owed copies there settled, copies others are owed from there made.
  void before_ldm_write(int core, std::uint64_t offset, std::uint64_t bytes) {
    if (copies_.can_defer()) copies_.before_write(std::uint64_t{1} << core, offset, offset + bytes);
  }
  /// [offset, offset + bytes) of `core`'s physical store freed: its owed copies there dropped, copies others are
  /// owed from there made.
  void free_ldm(int core, std::uint64_t offset, std::uint64_t bytes) {
    if (copies_.can_defer()) copies_.before_write(std::uint64_t{1} << core, offset, offset + bytes);
  }
  /// The group's local stores from now on (`ldm_base`, laid out as the constructor's), between launches: a host
  /// thread running one group at a time lends every group it runs the same stores.
  void use_stores(std::byte* ldm_base) {
    if (ldm_base == ldm_base_) return;
    copies_.use_stores(ldm_base);
    ldm_base_ = ldm_base;
  }
  /// A launch addressing `window` of every store ended: the copies owed there dropped (its buffers died with it).
  void end_launch(LdmWindow window) {
    copies_.drop(window.offset, window.offset + (window.bytes != 0 ? window.bytes : arch_.ldm_bytes));
  }

 private:
  /// execute() once the request passed every check (`result` holds a lint warning, if any), on the address it reads.
  DmaResult execute_checked(const DmaRequest& request, int core, Cycle issue, LdmWindow window, DmaResult result);
  void move(const DmaRequest& request, int core, std::uint64_t window_offset);
  std::byte* ldm_of(int core) const { return ldm_base_ + static_cast<std::size_t>(core) * arch_.ldm_bytes; }
  void record(const DmaRequest& request, int core, Cycle issue, DmaTiming timing, DmaStatus status);

  const Arch& arch_;
  int cg_;
  MainMemory& memory_;
  DmaEventSink* events_;
  std::byte* ldm_base_;
  bool lint_alignment_;
  bool move_data_;
  std::unique_ptr<TimingModel> model_;
  double remote_link_free_ = 0;  ///< when this group's link to other groups' memory is free (dma.remote)
  DeferredCopies copies_;        ///< what replicate_on_read gets still owe their receivers
};

}  // namespace ldmsim
