// Per-core slave state, the section swap at fiber switches and slave-pointer translation
// (see slave_context.hpp).
#include "slave_context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check_hooks.hpp"
#include "fatal_signals.hpp"
#include "rma_delivery.hpp"
#include "simd_charge.hpp"

namespace ldmsim::athread {

namespace {
void save_section(const SlaveContext& ctx) {
  const Session& s = session();
  if (s.tl_size() != 0) std::memcpy(ctx.ldm + ctx.tl_offset, s.tl_begin, s.tl_size());
}
void load_section(SlaveContext& ctx) {
  Session& s = session();
  if (s.tl_size() != 0) std::memcpy(s.tl_begin, ctx.ldm + ctx.tl_offset, s.tl_size());
  s.active = &ctx;
}
}  // namespace

SlaveContext& current(const char* api) {
  SlaveContext* ctx = session().active;
  if (ctx == nullptr) {
    std::fprintf(stderr, "ldmsim athread: %s called outside a slave function running on a compute core\n", api);
    std::exit(3);
  }
  ctx->spin_loads = 0;           // an athread call in a loop can change what the loop waits for
  charge_simd_work(*ctx->core);  // vector work done since the last call happened before this call
  session().latest_core_cycle = std::max(session().latest_core_cycle, ctx->core->cycle());
  deliver_due_rma(*ctx);
  deliver_stack_broadcasts(*ctx);
  return *ctx;
}

void deliver_stack_broadcasts(SlaveContext& ctx) {
  Session& s = session();
  if (s.stack_pending_count == 0) return;
  const auto it = s.stack_pending.find({ctx.core->cg(), ctx.core->id()});
  if (it == s.stack_pending.end()) return;
  for (const StackDelivery& d : it->second) {
    std::memcpy(reinterpret_cast<void*>(ctx.stack_top - d.depth), ctx.ldm + d.offset, d.length);
  }
  s.stack_pending_count -= it->second.size();
  s.stack_pending.erase(it);
}

void trap(SlaveContext& ctx, FaultKind kind, const std::string& message) {
  const Core& core = *ctx.core;
  throw Fault(kind, {core.node_cg(), core.id()}, core.cycle(), core.kernel(), message);
}

LdmRef to_ldm(SlaveContext& ctx, const void* p, std::uint64_t bytes, const char* api) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const auto ldm = reinterpret_cast<std::uintptr_t>(ctx.ldm);
  if (at >= ldm && at < ldm + ctx.ldm_bytes) return {static_cast<LdmAddr>(at - ldm), LdmRef::Kind::kHeap};
  const Session& s = session();
  const auto tl = reinterpret_cast<std::uintptr_t>(s.tl_begin);
  if (at >= tl && at < tl + s.tl_size()) {
    return {static_cast<LdmAddr>(ctx.tl_offset + (at - tl)), LdmRef::Kind::kThreadLocal};
  }
  if (at < ctx.stack_top && ctx.stack_top - at <= s.fiber_stack_bytes) {  // deeper is not this fiber's stack
    const std::uintptr_t depth = ctx.stack_top - at;
    if (bytes > depth) {  // the array's end is above the top of the stack: the length is wrong, not the depth
      trap(ctx, FaultKind::kLdmOverflow,
           fmt::format("{}: {} bytes at the stack array at depth {} bytes run {} bytes past the top of the slave "
                       "stack at ldm offset 0x{:x}: the transfer is longer than the array; hint: check the length (in "
                       "bytes)",
                       api, bytes, depth, bytes - depth, ctx.stack_hi));
    }
    if (ctx.stack_shared) {
      const LdmAddr floor = std::max(ctx.stack_lo, ctx.heap_top());
      if (depth > ctx.stack_hi - floor) {
        trap(ctx, FaultKind::kLdmOverflow,
             fmt::format("{}: the stack array at depth {} bytes ({} bytes long) would overlap the __thread_local data "
                         "and ldm_malloc'ed blocks below ldm offset 0x{:x}: the slave stack grows down from the top of "
                         "the {}-byte local store and has {} bytes left; hint: free ldm_malloc'ed blocks, or use "
                         "smaller stack arrays",
                         api, depth, bytes, floor, ctx.ldm_bytes, ctx.stack_hi - floor));
      }
      ctx.stack_depth_used = std::max<std::uint64_t>(ctx.stack_depth_used, depth);
    } else if (depth > ctx.stack_hi - ctx.stack_lo) {
      trap(ctx, FaultKind::kLdmOverflow,
           fmt::format("{}: the stack array at depth {} bytes ({} bytes long) lies below the {}-byte ldm stack "
                       "region (LDMSIM_ATHREAD_STACK_BYTES); hint: raise it or unset it (the stack then takes the free "
                       "ldm), or use __thread_local / ldm_malloc buffers",
                       api, depth, bytes, ctx.stack_hi - ctx.stack_lo));
    }
    return {static_cast<LdmAddr>(ctx.stack_hi - depth), LdmRef::Kind::kStack};
  }
  trap(ctx, FaultKind::kDmaOutOfBounds,
       fmt::format("{}: ldm address {} is not in this core's local store (neither ldm_malloc'ed, __thread_local nor "
                   "an array on the slave stack); hint: is it a main-memory pointer passed as the ldm side?",
                   api, p));
}

SwitchGuard::SwitchGuard(SlaveContext& ctx) : ctx_(ctx) {
  save_section(ctx_);
}

SwitchGuard::~SwitchGuard() {
  load_section(ctx_);
  deliver_stack_broadcasts(ctx_);  // a broadcast issued while this core waited is in its arrays when it goes on
}

void run_slave(Core& core, void (*fn)(void*), void* arg) {
  Session& s = session();
  SlaveContext ctx;
  ctx.core = &core;
  ctx.ldm = core.ldm().bytes(0);
  ctx.ldm_bytes = core.ldm().capacity();
  volatile char anchor = 0;
  // Rounded up: every array of the slave function's frames lies below the anchor, so its depth covers it.
  ctx.stack_top = (reinterpret_cast<std::uintptr_t>(&anchor) + 63) & ~std::uintptr_t{63};
  const std::uint64_t tl_bytes = s.tl_size() == 0 ? 0 : s.tl_size() + 64;
  if (tl_bytes + s.stack_bytes > ctx.ldm_bytes) {
    trap(ctx, FaultKind::kLdmOverflow,
         fmt::format("{}: the __thread_local data ({} bytes) plus the ldm stack region ({} bytes, "
                     "LDMSIM_ATHREAD_STACK_BYTES) do not fit the {}-byte local store",
                     core.kernel(), s.tl_size(), s.stack_bytes, ctx.ldm_bytes));
  }
  if (tl_bytes != 0) {
    const LdmAddr region = core.ldm().alloc_bytes(tl_bytes, 64);
    ctx.tl_offset = static_cast<LdmAddr>(region + reinterpret_cast<std::uintptr_t>(s.tl_begin) % 64);
    std::memcpy(ctx.ldm + ctx.tl_offset, s.tl_initial.data(), s.tl_size());
  }
  if (s.stack_bytes != 0) {
    ctx.stack_lo = core.ldm().alloc_bytes(s.stack_bytes, 64);
    ctx.stack_hi = static_cast<LdmAddr>(ctx.stack_lo + s.stack_bytes);
  } else {
    ctx.stack_shared = true;
    ctx.stack_lo = static_cast<LdmAddr>(tl_bytes == 0 ? 0 : ctx.tl_offset + s.tl_size());
    ctx.stack_hi = static_cast<LdmAddr>(ctx.ldm_bytes);
  }
  ensure_signal_stack();  // a stack overflow on this host thread's fibers must reach the handler
  start_checks(ctx);
  load_section(ctx);
  deliver_stack_broadcasts(ctx);
  forget_simd_work();
  try {
    if (s.num_threads == 0 || core.id() < s.num_threads) fn(arg);
    charge_simd_work(core);
    charge_all(ctx);
  } catch (...) {
    forget_simd_work();
    s.active = nullptr;
    throw;
  }
  s.active = nullptr;
}

}  // namespace ldmsim::athread
