// Private: how a fused program lays out in ldm (value slots reused across dead values, resident inputs), shared by
// the mapping choice and the kernel so that both count the same bytes.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "ldmsim/kernels/fused_kernel.hpp"
#include "ldmsim/kernels/tiling.hpp"

namespace ldmsim::fusion {

inline constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();
/// ldm left for the allocator's alignment and the kernel's small buffers.
inline constexpr std::uint64_t kLdmReserve = 1024;

/// Per value its ldm slot (kNoSlot: resident or unused); values whose live ranges do not overlap share a slot
/// (a -> x -> b -> y -> c needs two slots, not five).
struct SlotPlan {
  std::vector<std::size_t> slot;
  std::size_t slots = 0;
};
SlotPlan plan_slots(const FusedProgram& program, const std::vector<bool>& resident);

/// Elements of a streamed input's fp16 read buffer for tiles of `block` elements in `tile_rows` rows: at most one
/// read per row, each with two spare elements for the widening to words, and one more to start the next on a word.
inline std::uint64_t streamed_buffer_elements(std::uint64_t block, std::uint64_t tile_rows) {
  return block + 3 * tile_rows + 4;
}

/// The largest part of K a team member gets (split_even's parts differ by at most one pair).
inline std::uint64_t max_k_part(std::uint64_t k, std::uint32_t team) {
  return team <= 1 ? k : 2 * (((k + 1) / 2 + team - 1) / team);
}

/// Core `part` of `parts`' rows: contiguous, as equal as possible, in pairs when `pairs` (then a core's first
/// row starts every output on an even element, whatever the rows' sizes).
inline tiling::Range row_share(std::uint64_t rows, std::uint64_t parts, std::uint64_t part, bool pairs) {
  if (pairs) return tiling::split_even(rows, parts, part);
  const std::uint64_t base = rows / parts, extra = rows % parts;
  const std::uint64_t first = part * base + std::min(part, extra);
  return {first, first + base + (part < extra ? 1 : 0)};
}

/// Planned ldm bytes per core with `slots` value slots (plan_slots), `tile_rows` rows and K cut `team` ways.
std::uint64_t ldm_bytes(const FusedProgram& program, const std::vector<bool>& resident, std::size_t slots,
                        std::uint64_t tile_rows, std::uint32_t team);

/// Which external inputs are read whole once per core.
std::vector<bool> choose_resident(const FusedProgram& program, const Arch& arch);

}  // namespace ldmsim::fusion
