// SW26010-Pro RMA for athread programs: athread_rma_* / CRTS_rma_* timed by Core::rma. The bytes are read at
// issue and their effects (data, reply words) reach each receiving core when its clock reaches the landing
// cycle: at its next athread call, or in athread_rma_wait_value, which advances the clock to each landing in
// turn and blocks while only another core can still send. So a receiver's own earlier stores (`reply = 0;`, its
// __thread_local set-up) never overwrite an RMA that lands after them. A remote address is read in the issuer's
// own layout (the same ldm offset on the other cores), so remote buffers and reply words must be
// __thread_local or ldm_malloc'ed, never on a stack.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ldmsim/runtime/core.hpp"
#include "ldmsim_athread_common.h"
#include "rma_delivery.hpp"
#include "session.hpp"
#include "slave_context.hpp"

namespace ldmsim::athread {
namespace {

RmaScope to_scope(int reach) {
  switch (reach) {
    case 1:
      return RmaScope::kRow;
    case 2:
      return RmaScope::kCol;
    case 3:
      return RmaScope::kGroup;
    default:
      return RmaScope::kCore;
  }
}

/// The ldm offset of a buffer that must exist at the same offset on every core (heap or __thread_local).
LdmAddr shared_offset(SlaveContext& ctx, const volatile void* p, std::uint64_t bytes, const char* api,
                      const char* what) {
  const LdmRef ref = to_ldm(ctx, const_cast<const void*>(p), bytes, api);
  if (ref.kind == LdmRef::Kind::kStack) {
    trap(ctx, FaultKind::kInvalidArgument,
         fmt::format("{}: the {} {} is on the slave stack, which other cores cannot address; hint: make it "
                     "__thread_local or ldm_malloc it",
                     api, what, const_cast<const void*>(p)));
  }
  if (ref.offset > ctx.ldm_bytes || bytes > ctx.ldm_bytes - ref.offset) {
    trap(ctx, FaultKind::kDmaOutOfBounds,
         fmt::format("{}: the {} {} ({} bytes) runs past the local store", api, what, const_cast<const void*>(p),
                     bytes));
  }
  return ref.offset;
}

/// A reply word's offset: 4 bytes, 4-aligned, at the same offset on every core.
LdmAddr reply_offset(SlaveContext& ctx, const volatile void* p, const char* api, const char* what) {
  const LdmAddr offset = shared_offset(ctx, p, 4, api, what);
  if (offset % 4 != 0) {
    trap(ctx, FaultKind::kInvalidArgument,
         fmt::format("{}: the {} {} is not 4-byte aligned", api, what, const_cast<const void*>(p)));
  }
  return offset;
}

/// Host bytes of this (running) core's ldm offset: the section for __thread_local data, else the ldm.
std::byte* own_bytes(SlaveContext& ctx, LdmAddr offset) {
  const Session& s = session();
  if (s.tl_size() != 0 && offset >= ctx.tl_offset && offset < ctx.tl_offset + s.tl_size()) {
    return s.tl_begin + (offset - ctx.tl_offset);
  }
  return ctx.ldm + offset;
}

int read_word(SlaveContext& ctx, LdmAddr offset) {
  int v = 0;
  std::memcpy(&v, own_bytes(ctx, offset), sizeof v);
  return v;
}

void post(SlaveContext& ctx, int core, RmaDelivery d) {
  Session& s = session();
  d.seq = ++s.rma_seq;
  auto& queue = s.rma_pending[{ctx.core->cg(), core}];
  const auto at = std::upper_bound(queue.begin(), queue.end(), d, [](const RmaDelivery& a, const RmaDelivery& b) {
    return a.landing != b.landing ? a.landing < b.landing : a.seq < b.seq;
  });
  queue.insert(at, std::move(d));
  ++s.rma_pending_count;
}

std::vector<RmaDelivery>* pending_for(SlaveContext& ctx) {
  Session& s = session();
  if (s.rma_pending_count == 0) return nullptr;
  const auto it = s.rma_pending.find({ctx.core->cg(), ctx.core->id()});
  return it == s.rma_pending.end() || it->second.empty() ? nullptr : &it->second;
}

}  // namespace

void deliver_due_rma(SlaveContext& ctx) {
  std::vector<RmaDelivery>* queue = pending_for(ctx);
  if (queue == nullptr) return;
  const Cycle now = ctx.core->cycle();
  std::size_t done = 0;
  for (; done < queue->size() && (*queue)[done].landing <= now; ++done) {
    const RmaDelivery& d = (*queue)[done];
    if (!d.data.empty()) {
      std::memcpy(d.host_target != nullptr ? d.host_target : own_bytes(ctx, d.offset), d.data.data(), d.data.size());
    }
    if (d.has_reply) {
      const int raised = read_word(ctx, d.reply_offset) + 1;
      std::memcpy(own_bytes(ctx, d.reply_offset), &raised, sizeof raised);
    }
  }
  queue->erase(queue->begin(), queue->begin() + static_cast<std::ptrdiff_t>(done));
  session().rma_pending_count -= done;
}

}  // namespace ldmsim::athread

using namespace ldmsim;
using namespace ldmsim::athread;

extern "C" {

void __ldmsim_athread_rma(const char* api, int op, int reach, void* local, const void* remote, long len, int peer,
                          volatile void* l_rply, volatile void* r_rply, int blocking) {
  SlaveContext& ctx = current(api);
  charge_all(ctx);  // what is sent is normally what earlier gets brought in
  if (len <= 0) trap(ctx, FaultKind::kInvalidArgument, fmt::format("{}: length {} must be positive", api, len));
  const auto bytes = static_cast<std::uint64_t>(len);
  RmaRequest r;
  r.op = op == 0 ? RmaOp::kPut : RmaOp::kGet;
  r.scope = to_scope(reach);
  r.peer = peer;
  r.bytes = bytes;
  r.api = api;
  r.move_data = false;  // the effects are delivered at the landing cycle (see the top of this file)
  const LdmRef here = to_ldm(ctx, local, bytes, api);
  r.local = here.offset;
  r.remote = shared_offset(ctx, remote, bytes, api, "remote buffer");
  const bool local_reply = l_rply != nullptr;
  const bool remote_reply = r_rply != nullptr;
  const LdmAddr l_offset = local_reply ? reply_offset(ctx, l_rply, api, "local reply") : 0;
  const LdmAddr r_offset = remote_reply ? reply_offset(ctx, r_rply, api, "remote reply") : 0;
  const bool stack = here.kind == LdmRef::Kind::kStack;
  Cycle landing = 0;
  std::vector<std::byte> data(bytes);
  {
    SwitchGuard guard(ctx);  // this core's section is in its ldm now: every source reads the ldm
    landing = ctx.core->rma(r);
    const std::byte* source =
        r.op == RmaOp::kPut
            ? (stack ? static_cast<const std::byte*>(local) : ctx.ldm + r.local)
            : ctx.ldm + (static_cast<std::int64_t>(peer) - ctx.core->id()) * static_cast<std::int64_t>(ctx.ldm_bytes) +
                  r.remote;
    std::memcpy(data.data(), source, bytes);
  }
  if (r.op == RmaOp::kPut) {
    for (int id : ctx.core->rma_receivers(r.scope, peer)) {
      post(ctx, id,
           {.landing = landing, .offset = r.remote, .data = data, .has_reply = remote_reply, .reply_offset = r_offset});
    }
    if (local_reply) post(ctx, ctx.core->id(), {.landing = landing, .has_reply = true, .reply_offset = l_offset});
  } else {
    post(ctx, ctx.core->id(),
         {.landing = landing,
          .offset = r.local,
          .data = std::move(data),
          .host_target = stack ? static_cast<std::byte*>(local) : nullptr,
          .has_reply = local_reply,
          .reply_offset = l_offset});
    if (remote_reply) post(ctx, peer, {.landing = landing, .has_reply = true, .reply_offset = r_offset});
  }
  ctx.core->notify_waiters();
  if (blocking != 0) {
    ctx.core->wait_until(landing);
    deliver_due_rma(ctx);
  }
}

void __ldmsim_athread_rma_wait(const char* api, volatile void* rply, long value) {
  SlaveContext& ctx = current(api);
  const LdmAddr offset = reply_offset(ctx, rply, api, "reply word");
  for (;;) {
    deliver_due_rma(ctx);
    if (read_word(ctx, offset) >= value) return;
    if (const auto* queue = pending_for(ctx)) {  // the next RMA for this core lands later: wait for it
      ctx.core->wait_until(queue->front().landing);
      continue;
    }
    const int now = read_word(ctx, offset);
    SwitchGuard guard(ctx);
    ctx.core->block_until([&] { return pending_for(ctx) != nullptr; },
                          fmt::format("{} for the reply word at ldm offset 0x{:x} to reach {} (it is {}); no core "
                                      "will send the RMA that raises it",
                                      api, offset, value, now));
  }
}

}  // extern "C"
