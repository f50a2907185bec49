// The compute-core half of the athread / CRTS API: identity, DMA issue with reply counters, explicit waits,
// syncs, ldm_malloc and the cycle counter, each a checked call into the Core of the running slave.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <source_location>

#include "buffer_names.hpp"
#include "check_hooks.hpp"
#include "ldmsim/runtime/check_names.hpp"
#include "ldmsim/runtime/core.hpp"
#include "ldmsim/runtime/lint_sites.hpp"
#include "ldmsim_athread_common.h"
#include "ldmsim_simd_cxx.h"
#include "session.hpp"
#include "slave_context.hpp"

namespace ldmsim::athread {
namespace {

DmaMode to_mode(SlaveContext& ctx, int mode, const char* api) {
  switch (mode) {
    case PE_MODE:
      return DmaMode::kPe;
    case BCAST_MODE:
      return DmaMode::kBcast;
    case ROW_MODE:
    case BROW_MODE:
      return DmaMode::kRow;
    default:
      trap(ctx, FaultKind::kInvalidArgument,
           fmt::format("{}: DMA mode {} is not supported by ldmsim (PE_MODE, BCAST_MODE, ROW_MODE, BROW_MODE are)", api,
                       mode));
  }
}

/// A DMA call of the program: its two sides, as a trap or lint warning about it names them.
struct DmaCall {
  const SlaveContext* ctx = nullptr;
  const void* mem = nullptr;  // the host pointer
  const void* ldm = nullptr;  // the slave pointer
  LdmAddr ldm_offset = 0;
};

/// "main-memory side: host pointer P, byte N of host array 'A' (B bytes); ldm side: ...; called from slave code ...".
std::string dma_call_text(const DmaCall& call, std::uint64_t site) {
  return fmt::format("main-memory side: host pointer {}{}; ldm side: {} at ldm offset 0x{:x}{}; called from {}",
                     call.mem, host_array_text(reinterpret_cast<std::uintptr_t>(call.mem)), call.ldm, call.ldm_offset,
                     ldm_array_text(*call.ctx, call.ldm_offset), describe_site(site));
}

std::string lint_dma_text(std::uint64_t site, const void* call) {
  return dma_call_text(*static_cast<const DmaCall*>(call), site);
}

std::string lint_code_text(std::uint64_t site, const void* /*context*/) {
  return "called from " + describe_site(site);
}

/// While alive, the core's lint warnings name the program's call at `site` (its return address) and its line, and
/// for a DMA call (`call`) both of its buffers, as a trap does.
class LintCodeSite {
 public:
  LintCodeSite(Core& core, std::uintptr_t site, const DmaCall* call = nullptr) : core_(core) {
    if (call != nullptr) {
      set_lint_code_site(core_, site, lint_dma_text, call);
    } else {
      set_lint_code_site(core_, site, lint_code_text);
    }
  }
  ~LintCodeSite() { set_lint_code_site(core_, 0, nullptr); }
  LintCodeSite(const LintCodeSite&) = delete;
  LintCodeSite& operator=(const LintCodeSite&) = delete;

 private:
  Core& core_;
};

/// Rethrows a runtime trap about the call's arguments with the athread call's name in front.
[[noreturn]] void rethrow_named(const Fault& f, const char* api) {
  if (f.kind() != FaultKind::kInvalidArgument) throw;
  throw f.with_detail(fmt::format("{}: {}", api, f.detail()));
}

std::uint64_t field(long value) {
  return static_cast<std::uint64_t>(value);
}

void check_main(SlaveContext& ctx, std::uintptr_t main, const char* api) {
  const auto ldm = reinterpret_cast<std::uintptr_t>(ctx.ldm);
  const std::uint64_t group_ldm = ctx.ldm_bytes * static_cast<std::uint64_t>(ctx.core->group_size());
  const auto group_lo = ldm - ctx.ldm_bytes * static_cast<std::uint64_t>(ctx.core->id());
  const Session& s = session();
  const auto tl = reinterpret_cast<std::uintptr_t>(s.tl_begin);
  const bool in_ldm = main >= group_lo && main < group_lo + group_ldm;
  const bool in_tl = main >= tl && main < tl + s.tl_size();
  const bool on_stack = main < ctx.stack_top && ctx.stack_top - main <= s.fiber_stack_bytes;
  if (in_ldm || in_tl || on_stack) {
    trap(ctx, FaultKind::kDmaOutOfBounds,
         fmt::format("{}: main-memory address 0x{:x} is a local-store address (ldm_malloc'ed, __thread_local or on "
                     "the slave stack); hint: the main-memory and ldm arguments may be swapped",
                     api, main));
  }
}

/// A BCAST / ROW get into a stack array has filled that ldm offset on every receiving core: each copies the bytes
/// into its own array at the same depth (deliver_stack_broadcasts).
void post_stack_broadcast(SlaveContext& ctx, const DmaRequest& r, std::uintptr_t array) {
  Session& s = session();
  const Core& core = *ctx.core;
  const int cols = static_cast<int>(core.arch().cols);
  const int rows = static_cast<int>(core.arch().rows);
  for (int row = 0; row < rows; ++row) {
    const bool receives = r.mode == DmaMode::kRow ? row == core.row() : ((r.row_mask >> row) & 1u) != 0;
    if (!receives) continue;
    for (int id = row * cols; id < (row + 1) * cols; ++id) {
      if (id == core.id()) continue;
      s.stack_pending[{core.cg(), id}].push_back({static_cast<LdmAddr>(r.ldm), r.length, ctx.stack_top - array});
      ++s.stack_pending_count;
    }
  }
}

}  // namespace
}  // namespace ldmsim::athread

using namespace ldmsim;
using namespace ldmsim::athread;

extern "C" {

int __ldmsim_athread_id(void) {
  return current("_MYID").core->id();
}
int __ldmsim_athread_row(void) {
  return current("_ROW").core->row();
}
int __ldmsim_athread_col(void) {
  return current("_COL").core->col();
}
int __ldmsim_athread_cgn(void) {
  return current("_CGN").core->cg();
}

void __ldmsim_athread_dma(const char* api, int get, int mode, const void* mem, const void* ldm, long len, long bsize,
                          long stride, unsigned mask, volatile void* reply, int blocking) {
  SlaveContext& ctx = current(api);
  Session& s = session();
  const DmaMode kind = to_mode(ctx, mode, api);
  if (get == 0 && kind != DmaMode::kPe) {
    trap(ctx, FaultKind::kInvalidArgument, fmt::format("{}: puts support only PE_MODE", api));
  }
  const auto main_host = reinterpret_cast<std::uintptr_t>(mem);
  check_main(ctx, main_host, api);
  const LdmRef ref = to_ldm(ctx, ldm, field(len), api);
  DmaRequest r;
  r.op = get != 0 ? DmaOp::kGet : DmaOp::kPut;
  r.mode = kind;
  r.main = s.mirror.to_device(main_host, s.machine->memory())
               .value_or(main_host);  // unmapped: the engine traps on the raw address
  r.ldm = ref.offset;
  r.length = field(len);
  r.bsize = stride == 0 ? 0 : field(bsize);  // no gap: contiguous, whatever bsize says (as on hardware)
  r.stride = field(stride);
  r.row_mask = mask;
  r.api = api;
  // A stable mirror's region reaches past its mapping, where the engine would not see an overrun: trap it here.
  if (s.mirror.stable_addresses() && s.mirror.mapped(main_host) && !s.mirror.within(main_host, r.main_end() - r.main)) {
    trap(ctx, FaultKind::kDmaOutOfBounds,
         fmt::format("{}: main-memory range at 0x{:x} of {} bytes runs past the end of its host mapping", api,
                     main_host, r.main_end() - r.main));
  }
  if (r.op == DmaOp::kPut && !s.mirror.writable(main_host, r.main_end() - r.main)) {
    if (s.mirror.mapped(main_host)) {
      trap(ctx, FaultKind::kDmaOutOfBounds,
           fmt::format("{}: main-memory destination 0x{:x} is read-only host memory", api, main_host));
    }
  }
  // A request that touches ldm bytes of an outstanding one starts after it: on hardware the program must
  // have waited for that request (by spinning on its reply) before reusing the buffer. A put also starts
  // after every outstanding get: its data is normally computed from what the gets brought in.
  const auto site = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));  // the program's call
  if (ctx.check_bounds) check_host_bounds(ctx, r, main_host, site);
  const auto lo = static_cast<LdmAddr>(ref.offset);
  const auto hi = static_cast<LdmAddr>(ref.offset + std::min<std::uint64_t>(r.length, ctx.ldm_bytes));
  const bool put = r.op == DmaOp::kPut;
  if (ctx.check_accesses) ctx.check->before_issue(lo, hi, !put, api, site, describe_site);
  charge(ctx, [&](const Outstanding& o) { return (put && o.get) || (o.lo < hi && lo < o.hi); });

  const bool stack = ref.kind == LdmRef::Kind::kStack;
  const bool fits = r.length <= ctx.ldm_bytes - std::min<std::uint64_t>(ref.offset, ctx.ldm_bytes);
  if (stack && r.op == DmaOp::kPut && fits) std::memcpy(ctx.ldm + ref.offset, ldm, r.length);
  if (r.op == DmaOp::kGet) s.mirror.before_get(s.machine->memory(), r);
  if (ctx.check != nullptr) set_issue_site(*ctx.check, site, describe_site);
  DmaHandle handle;
  const DmaCall call{&ctx, mem, ldm, static_cast<LdmAddr>(ref.offset)};
  try {
    SwitchGuard guard(ctx);
    const LintCodeSite lint_site(*ctx.core, site, &call);
    handle = ctx.core->dma(r, std::source_location{});  // the program's own line is named through `site`
  } catch (const Fault& f) {
    if (f.kind() != FaultKind::kDmaMisaligned && f.kind() != FaultKind::kDmaOutOfBounds) throw;
    // The runtime names the region the request starts in; here a region is a whole host mapping, so the host
    // array stands in for it.
    std::string detail = f.detail();
    if (const auto at = detail.find(" [main memory: "); at != std::string::npos) {
      detail.erase(at, detail.find(']', at) + 1 - at);
    }
    throw f.with_detail(fmt::format("{} [{}]", detail, dma_call_text(call, site)));
  }
  if (r.op == DmaOp::kPut) s.mirror.after_put(s.machine->memory(), r);
  if (stack && r.op == DmaOp::kGet) {
    std::memcpy(const_cast<void*>(ldm), ctx.ldm + ref.offset, r.length);
    if (kind != DmaMode::kPe) post_stack_broadcast(ctx, r, reinterpret_cast<std::uintptr_t>(ldm));
  }
  if (blocking != 0) {
    ctx.core->wait(handle);
    if (ctx.check_accesses) ctx.check->observed(handle.id());
  } else {
    ctx.outstanding.push_back({handle, reply, lo, hi, !put});
    if (ctx.check_accesses) {
      ctx.unobserved.emplace_back(reply, handle.id());
      const auto word = reinterpret_cast<std::uintptr_t>(const_cast<void*>(reply));
      if (word != 0 && std::find(ctx.reply_words.begin(), ctx.reply_words.end(), word) == ctx.reply_words.end()) {
        ctx.reply_words.push_back(word);
      }
    }
  }
  if (reply != nullptr) {
    auto* counter = static_cast<volatile int*>(reply);
    *counter = *counter + 1;
  }
}

void __ldmsim_athread_wait(const char* api, volatile void* reply, long value) {
  SlaveContext& ctx = current(api);
  auto* counter = static_cast<volatile int*>(reply);
  charge(ctx, [&](const Outstanding& o) { return o.reply == reply; });
  if (ctx.check_accesses) observe_reply(ctx, reply);
  if (*counter < value) {
    trap(ctx, FaultKind::kDeadlock,
         fmt::format("{}: waits for reply counter {} to reach {} but it is {} and no request is outstanding on it; "
                     "this wait would hang on hardware",
                     api, const_cast<const void*>(reply), value, *counter));
  }
}

void __ldmsim_athread_sync(const char* api, int which, unsigned mask) {
  SlaveContext& ctx = current(api);
  (void)mask;  // every core of the scope takes part (see docs/athread.md)
  Scope s = Scope::kGroup;
  if (which == 3) s = Scope::kNode;  // every core of every group the spawn runs on
  if (which == ROW_SCOPE) s = Scope::kRow;
  if (which == COL_SCOPE) s = Scope::kCol;
  charge_all(ctx);
  SwitchGuard guard(ctx);
  ctx.core->barrier(s);
}

unsigned long __ldmsim_athread_cycle(void) {
  SlaveContext& ctx = current("athread_time_cycle");
  charge_all(ctx);
  return ctx.core->cycle();
}

void ldmsim_athread_charge(unsigned long cycles) {
  SlaveContext& ctx = current("ldmsim_athread_charge");
  ctx.core->compute({.flops = 0, .cycles = cycles});
}

void* __ldmsim_athread_ldm_malloc(const char* api, size_t bytes) {
  SlaveContext& ctx = current(api);
  LdmAddr at = 0;
  try {
    at = ctx.core->ldm().alloc_bytes(bytes, 32);
  } catch (const Fault& f) {
    trap(ctx, f.kind(), fmt::format("{}: {}", api, f.detail()));
  }
  const auto end = static_cast<LdmAddr>(at + bytes);
  if (ctx.stack_shared && end > ctx.stack_hi - ctx.stack_depth_used) {
    ctx.core->ldm().free_at(at);
    trap(ctx, FaultKind::kLdmOverflow,
         fmt::format("{}: {} bytes at ldm offset 0x{:x} would overlap the slave stack, which reaches {} bytes below "
                     "the top of the {}-byte local store; hint: allocate before the deep stack arrays are used, or "
                     "use smaller buffers",
                     api, bytes, at, ctx.stack_depth_used, ctx.ldm_bytes));
  }
  ctx.heap_blocks[at] = end;
  return ctx.core->ldm().bytes(at);
}

void __ldmsim_athread_ldm_free(const char* api, void* ptr) {
  SlaveContext& ctx = current(api);
  const LdmRef ref = to_ldm(ctx, ptr, 0, api);
  if (ref.kind != LdmRef::Kind::kHeap) {
    trap(ctx, FaultKind::kInvalidArgument, fmt::format("{}: {} was not returned by ldm_malloc", api, ptr));
  }
  charge(ctx, [&](const Outstanding& o) { return o.hi > ref.offset; });
  try {
    ctx.core->ldm().free_at(ref.offset);
    ctx.heap_blocks.erase(ref.offset);
  } catch (const Fault& f) {
    trap(ctx, f.kind(), fmt::format("{}: {}", api, f.detail()));
  }
}

void __ldmsim_athread_reg_put(const char* api, int bus, const void* data, size_t bytes, int dst) {
  SlaveContext& ctx = current(api);
  if (bytes > sizeof(RegValue)) {
    trap(ctx, FaultKind::kInvalidArgument,
         fmt::format("{}: a {}-byte value; register communication moves at most 32 bytes (256 bits)", api, bytes));
  }
  charge_all(ctx);  // a value sent is normally computed from what earlier gets brought in
  RegValue value;
  std::memcpy(value.bytes.data(), data, std::min(bytes, value.bytes.size()));
  try {
    SwitchGuard guard(ctx);
    ctx.core->reg_put(bus == 0 ? RegBus::kRow : RegBus::kCol, dst, value);
  } catch (const Fault& f) {
    rethrow_named(f, api);
  }
}

void __ldmsim_athread_reg_get(const char* api, int bus, void* data, size_t bytes) {
  SlaveContext& ctx = current(api);
  if (bytes > sizeof(RegValue)) {
    trap(ctx, FaultKind::kInvalidArgument,
         fmt::format("{}: a {}-byte variable; register communication moves at most 32 bytes (256 bits)", api, bytes));
  }
  RegValue value;
  try {
    SwitchGuard guard(ctx);
    value = ctx.core->reg_get(bus == 0 ? RegBus::kRow : RegBus::kCol);
  } catch (const Fault& f) {
    rethrow_named(f, api);
  }
  std::memcpy(data, value.bytes.data(), std::min(bytes, value.bytes.size()));
}

void __ldmsim_athread_unsupported(const char* api, const char* why) {
  SlaveContext& ctx = current(api);
  trap(ctx, FaultKind::kInvalidArgument, fmt::format("{}: {}", api, why));
}

void __ldmsim_athread_simd_misaligned(const char* api, const void* addr, size_t alignment) {
  SlaveContext& ctx = current(api);
  // Not a fault (docs/athread.md "Misaligned vector loads and stores"): the access spans two aligned vectors and is
  // charged a second ldm access; the first one of each core per spawn is reported as a lint warning.
  ++__ldmsim_simd_work.ldm_accesses;
  if (ctx.simd_misaligned_reported) return;
  ctx.simd_misaligned_reported = true;
  const LintCodeSite lint_site(*ctx.core, reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)));
  ctx.core->lint(
      fmt::format("{}: address {} is not aligned to {} bytes (charged as two ldm accesses; later "
                  "misaligned vector accesses of this core in this spawn are not reported); hint: use "
                  "simd_loadu / simd_storeu or align the buffer",
                  api, addr, alignment));
}

}  // extern "C"
