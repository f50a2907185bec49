// Per-core state of a spawned slave function: its Core, the ldm regions reserved for the __thread_local
// section and for the slave stack, outstanding DMA requests with their reply counters, and the translation of
// a slave pointer (ldm_malloc'ed, __thread_local or a stack array) to an ldm offset.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ldmsim/runtime/check.hpp"
#include "ldmsim/runtime/core.hpp"
#include "session.hpp"

namespace ldmsim::athread {

/// One DMA request issued through the athread layer and not yet charged to the core's clock.
struct Outstanding {
  DmaHandle handle;
  volatile void* reply;
  LdmAddr lo;
  LdmAddr hi;
  bool get;
};

/// Where a slave pointer lives in the core's local store.
struct LdmRef {
  enum class Kind : std::uint8_t { kHeap, kThreadLocal, kStack };
  LdmAddr offset = 0;
  Kind kind = Kind::kHeap;
};

struct SlaveContext {
  Core* core = nullptr;
  std::byte* ldm = nullptr;  // host view of ldm offset 0
  std::uint64_t ldm_bytes = 0;
  LdmAddr tl_offset = 0;  // ldm offset of the section's first byte
  LdmAddr stack_lo = 0;   // ldm range standing for the slave stack
  LdmAddr stack_hi = 0;
  // No fixed stack size (LDMSIM_ATHREAD_STACK_BYTES unset): the stack grows down from the top of the local store
  // and meets the ldm_malloc'ed blocks, which grow up.
  bool stack_shared = false;
  std::uint64_t stack_depth_used = 0;      // deepest stack array mapped to ldm so far
  std::map<LdmAddr, LdmAddr> heap_blocks;  // live ldm_malloc'ed blocks: offset -> end
  std::uintptr_t stack_top = 0;            // host address the slave stack grows down from
  std::vector<Outstanding> outstanding;
  bool simd_misaligned_reported = false;  // a misaligned simd_load/store was reported (once per core per spawn)
  // Checking mode (docs/checking.md): the core's checker, null when off; with slave code built to report its loads
  // and stores, the requests whose completion the program has not yet seen (reply counter, request id).
  CoreCheck* check = nullptr;
  bool check_accesses = false;
  bool check_bounds = false;  // `bounds` is on: requests are checked against the host arrays they start in
  std::vector<std::pair<volatile void*, std::uint64_t>> unobserved;
  // The reply words the program gave its requests in this spawn, and the current run of loads of one of them with
  // nothing in flight on it and no athread call in between: a spin that nothing can end (reset by current()).
  std::vector<std::uintptr_t> reply_words;
  std::uintptr_t spin_word = 0;
  std::uint64_t spin_loads = 0;

  /// End of the highest live ldm_malloc'ed block (0 when none).
  LdmAddr heap_top() const { return heap_blocks.empty() ? 0 : heap_blocks.rbegin()->second; }
};

/// The calling compute core's context; aborts the process with a message when called off a compute core.
SlaveContext& current(const char* api);
/// Raises a Fault of `kind` on the calling core.
[[noreturn]] void trap(SlaveContext& ctx, FaultKind kind, const std::string& message);
/// Translates `bytes` bytes at slave pointer p to the ldm (traps when p is not in this core's local store).
LdmRef to_ldm(SlaveContext& ctx, const void* p, std::uint64_t bytes, const char* api);
/// Moves the core's clock to the completion of the outstanding requests `pick` selects.
template <typename Pick>
void charge(SlaveContext& ctx, Pick pick) {
  std::erase_if(ctx.outstanding, [&](const Outstanding& o) {
    if (!pick(o)) return false;
    ctx.core->wait(o.handle);
    return true;
  });
}
inline void charge_all(SlaveContext& ctx) {
  charge(ctx, [](const Outstanding&) { return true; });
}

/// Brackets a runtime call that may switch to another core's fiber: the section is saved to this core's
/// ldm before it and restored after it (also when the call throws).
class SwitchGuard {
 public:
  explicit SwitchGuard(SlaveContext& ctx);
  ~SwitchGuard();
  SwitchGuard(const SwitchGuard&) = delete;
  SwitchGuard& operator=(const SwitchGuard&) = delete;

 private:
  SlaveContext& ctx_;
};

/// Copies the broadcast gets into stack arrays that reached this core's ldm into its own stack arrays.
void deliver_stack_broadcasts(SlaveContext& ctx);

/// Runs the spawned function on one core (the kernel of an athread launch).
void run_slave(Core& core, void (*fn)(void*), void* arg);

}  // namespace ldmsim::athread
