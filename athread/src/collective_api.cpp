// CRTS collectives for athread programs: CRTS_scoll_redurt, an all-reduce over the cores of the group. Each core
// leaves its contribution in the session, a group barrier lets every core's arrive, each core then combines all
// of them in core-id order (so the floating-point result does not depend on arrival order), and a second barrier
// keeps the contributions until every core has read them.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ldmsim/runtime/core.hpp"
#include "ldmsim_athread_common.h"
#include "session.hpp"
#include "slave_context.hpp"

namespace ldmsim::athread {
namespace {

std::size_t element_bytes(int dtype) {
  switch (dtype) {
    case 0:  // CRTS_int
    case 1:  // CRTS_uint
    case 4:  // CRTS_float
      return 4;
    case 2:  // CRTS_long
    case 3:  // CRTS_ulong
    case 5:  // CRTS_double
      return 8;
    default:
      return 0;
  }
}

template <typename T>
T combine(T a, T b, int op) {
  switch (op) {
    case 5:  // OP_min
      return std::min(a, b);
    case 6:  // OP_max
      return std::max(a, b);
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case 1:  // OP_and
        return a & b;
      case 2:  // OP_or
        return a | b;
      case 3:  // OP_xor
        return a ^ b;
      case 4:  // OP_eqv
        return static_cast<T>(~(a ^ b));
      default:
        break;
    }
  }
  return static_cast<T>(a + b);  // OP_add
}

template <typename T>
void reduce_into(void* dst, const std::vector<std::vector<std::byte>>& parts, std::size_t units, int op) {
  std::vector<T> acc(units);
  std::memcpy(acc.data(), parts.front().data(), units * sizeof(T));
  for (std::size_t p = 1; p < parts.size(); ++p) {
    for (std::size_t i = 0; i < units; ++i) {
      T x;
      std::memcpy(&x, parts[p].data() + i * sizeof(T), sizeof(T));
      acc[i] = combine(acc[i], x, op);
    }
  }
  std::memcpy(dst, acc.data(), units * sizeof(T));
}

}  // namespace
}  // namespace ldmsim::athread

using namespace ldmsim;
using namespace ldmsim::athread;

extern "C" void __ldmsim_athread_allreduce(const char* api, const void* src, void* dst, int units, int dtype, int op) {
  SlaveContext& ctx = current(api);
  const std::size_t bytes = element_bytes(dtype);
  if (bytes == 0 || units < 0 || op < 0 || op > 6 || ((dtype == 4 || dtype == 5) && op >= 1 && op <= 4)) {
    trap(ctx, FaultKind::kInvalidArgument,
         fmt::format("{}: data type {} with operation {} is not supported (types CRTS_int, CRTS_uint, CRTS_long, "
                     "CRTS_ulong, CRTS_float, CRTS_double; OP_add, OP_min, OP_max, and OP_and, OP_or, OP_xor, "
                     "OP_eqv for the integer types), or {} units",
                     api, dtype, op, units));
  }
  Session& s = session();
  Core& core = *ctx.core;
  auto& parts = s.collective_parts[core.cg()];
  parts.resize(static_cast<std::size_t>(core.group_size()));
  const auto n = static_cast<std::size_t>(units);
  parts[static_cast<std::size_t>(core.id())].assign(static_cast<const std::byte*>(src),
                                                    static_cast<const std::byte*>(src) + n * bytes);
  charge_all(ctx);
  {
    SwitchGuard guard(ctx);
    core.barrier(Scope::kGroup);
  }
  // One combining step per level of a reduction tree over the group's cores, per unit (an estimate).
  const auto levels = static_cast<Cycle>(std::bit_width(static_cast<unsigned>(core.group_size()) - 1));
  core.compute({.flops = 0, .cycles = levels * static_cast<Cycle>(n)});
  switch (dtype) {
    case 0:
      reduce_into<std::int32_t>(dst, parts, n, op);
      break;
    case 1:
      reduce_into<std::uint32_t>(dst, parts, n, op);
      break;
    case 2:
      reduce_into<std::int64_t>(dst, parts, n, op);
      break;
    case 3:
      reduce_into<std::uint64_t>(dst, parts, n, op);
      break;
    case 4:
      reduce_into<float>(dst, parts, n, op);
      break;
    default:
      reduce_into<double>(dst, parts, n, op);
      break;
  }
  SwitchGuard guard(ctx);
  core.barrier(Scope::kGroup);  // nobody overwrites its contribution before every core has combined them
}
