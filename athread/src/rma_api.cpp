// SW26010-Pro RMA for athread programs: athread_rma_* / CRTS_rma_* on Core::rma, with reply counters raised on
// the receiving cores and waits that block while another core may still raise them. A remote address is read
// in the issuer's own layout (the same ldm offset on the other cores), so buffers and reply words on the other
// side must be __thread_local or ldm_malloc'ed, never on a stack.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ldmsim/runtime/core.hpp"
#include "ldmsim_athread_common.h"
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

/// The ldm offset of a reply word or remote buffer: it must exist at the same offset on every core.
LdmAddr shared_offset(SlaveContext& ctx, const volatile void* p, std::uint64_t bytes, const char* api,
                      const char* what) {
  const LdmRef ref = to_ldm(ctx, const_cast<const void*>(p), bytes, api);
  if (ref.kind == LdmRef::Kind::kStack) {
    trap(ctx, FaultKind::kInvalidArgument,
         fmt::format("{}: the {} {} is on the slave stack, which other cores cannot address; hint: make it "
                     "__thread_local or ldm_malloc it",
                     api, what, const_cast<const void*>(p)));
  }
  return ref.offset;
}

/// The cores whose ldm a put of `scope` writes (or the source core of a get).
std::vector<int> receivers(const Core& core, RmaScope scope, int peer) {
  std::vector<int> ids;
  const int rows = core.rows(), cols = core.cols();
  switch (scope) {
    case RmaScope::kCore:
      ids.push_back(peer);
      break;
    case RmaScope::kRow:
      for (int c = 0; c < cols; ++c) ids.push_back(core.row() * cols + c);
      break;
    case RmaScope::kCol:
      for (int r = 0; r < rows; ++r) ids.push_back(r * cols + core.col());
      break;
    case RmaScope::kGroup:
      for (int k = 0; k < rows * cols; ++k) ids.push_back(k);
      break;
  }
  return ids;
}

/// Raises the reply word at `offset` of core `id` and remembers when it reached its new value.
void raise_reply(SlaveContext& ctx, int id, LdmAddr offset, Cycle arrival) {
  Session& s = session();
  const bool in_section = id == ctx.core->id() && offset >= ctx.tl_offset && offset < ctx.tl_offset + s.tl_size();
  std::byte* word =
      in_section
          ? s.tl_begin + (offset - ctx.tl_offset)
          : ctx.ldm + (static_cast<std::int64_t>(id) - ctx.core->id()) * static_cast<std::int64_t>(ctx.ldm_bytes) +
                offset;
  int value = 0;
  std::memcpy(&value, word, sizeof value);
  ++value;
  std::memcpy(word, &value, sizeof value);
  auto& history = s.rma_replies[{ctx.core->cg(), id, offset}];
  history.push_back({value, arrival});
  if (history.size() > 256) history.erase(history.begin());  // waits look at recent values only
}

}  // namespace
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
  const LdmRef here = to_ldm(ctx, local, bytes, api);
  r.local = here.offset;
  r.remote = shared_offset(ctx, remote, bytes, api, "remote buffer");
  const bool stack = here.kind == LdmRef::Kind::kStack;
  if (stack && r.op == RmaOp::kPut) std::memcpy(ctx.ldm + r.local, local, bytes);
  Cycle done = 0;
  try {
    SwitchGuard guard(ctx);
    done = ctx.core->rma(r);
  } catch (const Fault& f) {
    if (f.kind() == FaultKind::kDeadlock) throw;
    throw Fault(f.kind(), f.where(), f.cycle(), f.kernel(),
                fmt::format("{} [local {}, remote {}]", f.detail(), static_cast<const void*>(local), remote));
  }
  if (stack && r.op == RmaOp::kGet) std::memcpy(local, ctx.ldm + r.local, bytes);
  if (l_rply != nullptr) raise_reply(ctx, ctx.core->id(), shared_offset(ctx, l_rply, 4, api, "local reply"), done);
  if (r_rply != nullptr) {
    const LdmAddr offset = shared_offset(ctx, r_rply, 4, api, "remote reply");
    for (int id : receivers(*ctx.core, r.scope, peer)) raise_reply(ctx, id, offset, done);
  }
  ctx.core->notify_waiters();
  if (blocking != 0) ctx.core->wait_until(done);
}

void __ldmsim_athread_rma_wait(const char* api, volatile void* rply, long value) {
  SlaveContext& ctx = current(api);
  const LdmAddr offset = shared_offset(ctx, rply, 4, api, "reply word");
  const auto read = [&] {
    int v = 0;
    std::memcpy(&v, ctx.ldm + offset, sizeof v);  // this core's copy in its ldm (the section is saved there)
    return static_cast<long>(v);
  };
  {
    SwitchGuard guard(ctx);
    ctx.core->block_until([&] { return read() >= value; },
                          fmt::format("{} for the reply word at ldm offset 0x{:x} to reach {} (it is {}); no core "
                                      "will raise it: an RMA that never comes",
                                      api, offset, value, read()));
  }
  // The data arrived when the counter last reached `value`.
  const auto& history = session().rma_replies[{ctx.core->cg(), ctx.core->id(), offset}];
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->value == value) {
      ctx.core->wait_until(it->arrival);
      break;
    }
  }
}

}  // extern "C"
