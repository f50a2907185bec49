// The fused program's values and the choice of its mapping (rows per tile, team size) from ldm and core counts.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "estimate_request.hpp"
#include "fused_layout.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"
#include "ldmsim/kernels/tiling.hpp"

namespace ldmsim {

std::string FusionFrame::str() const {
  return fmt::format("[rows {} | K {} | I {}]", rows(), k(), i());
}

std::uint64_t FusedValue::rows(const FusionFrame& frame) const {
  std::uint64_t n = 1;
  for (std::size_t a = 0; a < frame.k_begin; ++a) n *= dims[a];
  return n;
}

std::uint64_t FusedValue::row_elements(const FusionFrame& frame) const {
  return (k ? frame.k() : 1) * (i ? frame.i() : 1);
}

std::string FusedValue::pattern(const FusionFrame& frame) const {
  return fmt::format("[{}, {}, {}]", rows(frame) == 1 ? "1" : "o", k ? "k" : "1", i ? "i" : "1");
}

std::size_t FusedProgram::reductions() const {
  return static_cast<std::size_t>(
      std::count_if(steps.begin(), steps.end(), [](const FusedStep& s) { return s.kind == FusedStep::Kind::kReduce; }));
}

std::string FusedMapping::str() const {
  if (team > 1) return fmt::format("one row per team of {} cores (K cut {} ways), {} cores", team, team, workers);
  return fmt::format("up to {} row{} per tile, {} cores{}", tile_rows, tile_rows == 1 ? "" : "s", workers,
                     on_one_group ? " of core group 0" : "");
}

namespace fusion {

SlotPlan plan_slots(const FusedProgram& p, const std::vector<bool>& resident) {
  const std::size_t n = p.values.size();
  SlotPlan plan;
  plan.slot.assign(n, kNoSlot);
  // Live ranges in positions: loads at 0, step s defines its result at s + 1, outputs live to the end.
  const std::size_t end = p.steps.size() + 1;
  std::vector<std::size_t> last(n, 0);
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    for (std::size_t a : p.steps[s].args) last[a] = std::max(last[a], s + 1);
  }
  for (std::size_t v : p.outputs) last[v] = end;
  std::vector<std::size_t> free_at;  // per slot: the position after which it is free
  auto take = [&](std::size_t v, std::size_t at) {
    for (std::size_t s = 0; s < free_at.size(); ++s) {
      if (free_at[s] < at) {
        plan.slot[v] = s;
        free_at[s] = std::max(last[v], at);
        return;
      }
    }
    plan.slot[v] = free_at.size();
    free_at.push_back(std::max(last[v], at));
  };
  for (std::size_t k = 0; k < p.inputs.size(); ++k) {
    if (!resident[k] && plan.slot[p.inputs[k]] == kNoSlot) take(p.inputs[k], 0);
  }
  // A result never shares a slot with its own arguments (a broadcast result is larger than its operand), so a
  // slot frees strictly after its value's last read.
  for (std::size_t s = 0; s < p.steps.size(); ++s) take(p.steps[s].result, s + 1);
  plan.slots = free_at.size();
  return plan;
}

std::uint64_t ldm_bytes(const FusedProgram& p, const std::vector<bool>& resident, std::size_t slots,
                        std::uint64_t tile_rows, std::uint32_t team) {
  const FusionFrame& f = p.frame;
  const std::uint64_t block = tile_rows * max_k_part(f.k(), team) * f.i();  // elements of a tile's largest value
  std::uint64_t bytes = slots * block * sizeof(float);
  for (std::size_t k = 0; k < p.inputs.size(); ++k) {
    const FusedValue& v = p.values[p.inputs[k]];
    // A resident input in fp32; a streamed one gets its own fp16 read buffer (two spare elements per row for a
    // read widened to 4-byte words), so that every input's reads of a tile are in flight at once.
    bytes += resident[k] ? v.rows(f) * v.row_elements(f) * sizeof(float)
                         : streamed_buffer_elements(block, tile_rows) * sizeof(f16);
  }
  // fp16 buffers of writes and of layout-aware gathers (a buffer and its staging), and the team's partials.
  bytes += (3 * (block + 4) + tile_rows) * sizeof(f16);
  if (team > 1) bytes += (team + 1) * f.i() * sizeof(float) + 64;
  // Every allocation may lose up to the allocator's alignment.
  const std::uint64_t allocations = slots + p.inputs.size() + 5;
  return bytes + allocations * Ldm::kDefaultAlignment + kLdmReserve;
}

std::vector<bool> choose_resident(const FusedProgram& p, const Arch& arch) {
  std::vector<bool> resident(p.inputs.size(), false);
  std::uint64_t budget = arch.ldm_bytes / 8;
  for (std::size_t k = 0; k < p.inputs.size(); ++k) {
    const FusedValue& v = p.values[p.inputs[k]];
    const std::uint64_t bytes = v.rows(p.frame) * v.row_elements(p.frame) * sizeof(float);
    // Row-invariant inputs (a LayerNorm scale) and small per-row ones (a BN channel vector) are read once.
    if (bytes <= budget && (v.rows(p.frame) == 1 || v.rows(p.frame) < p.frame.rows())) {
      resident[k] = true;
      budget -= bytes;
    }
  }
  return resident;
}

}  // namespace fusion

namespace {

constexpr std::uint64_t kMaxTileElements = 16384;

/// A resident input is read whole by every busy core, in tile-sized chunks each waited for; streamed, it costs a
/// read per tile, issued with the other inputs' reads. An input that takes more chunks than the busiest core has
/// tiles (a [3, 16, 96] multiplied into every sample of a [2, 3, 16, 96], on 96 cores of one row each: 48 chunks
/// for one tile) streams instead. Kept resident when streaming it would not fit (`fits` is asked with the changed
/// residency and slots).
template <typename Fits>
void stream_inputs_cheaper_by_tiles(const FusedProgram& p, std::uint64_t core_rows, std::uint64_t tile_rows,
                                    std::vector<bool>& resident, std::size_t& slots, Fits&& fits) {
  const FusionFrame& f = p.frame;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, tile_rows * f.k() * f.i());
  const std::uint64_t tiles = fusion::ceil_div(core_rows, tile_rows);
  std::vector<bool> changed = resident;
  for (std::size_t k = 0; k < p.inputs.size(); ++k) {
    const FusedValue& v = p.values[p.inputs[k]];
    const std::uint64_t chunks = fusion::ceil_div(v.rows(f) * v.row_elements(f), chunk);
    if (changed[k] && v.rows(f) > 1 && chunks > tiles) changed[k] = false;
  }
  if (changed == resident) return;
  const std::vector<bool> before = std::exchange(resident, changed);
  const std::size_t slots_before = std::exchange(slots, fusion::plan_slots(p, resident).slots);
  if (fits()) return;
  resident = before;
  slots = slots_before;
}

}  // namespace

std::optional<FusedMapping> choose_fused_mapping(const FusedProgram& p, const Arch& arch, StagingPolicy policy,
                                                 std::uint32_t cores, std::uint32_t want_team) {
  const FusionFrame& f = p.frame;
  const std::uint32_t group = arch.cores_per_group();
  const std::uint64_t workers = cores == 0 ? arch.total_cores() : std::min<std::uint64_t>(cores, arch.total_cores());
  const std::uint64_t rows = f.rows();
  FusedMapping m;
  m.resident = fusion::choose_resident(p, arch);
  std::size_t slots = fusion::plan_slots(p, m.resident).slots;
  const auto bytes = [&](std::uint64_t tile, std::uint32_t team) {
    return fusion::ldm_bytes(p, m.resident, slots, tile, team);
  };
  const auto fits = [&](std::uint64_t tile, std::uint32_t team) { return bytes(tile, team) <= arch.ldm_bytes; };
  // Rows whose outputs are odd-sized must go to cores in pairs (a core owns whole 4-byte words of each output).
  bool odd_rows = false;
  for (std::size_t v : p.outputs) odd_rows = odd_rows || p.values[v].row_elements(f) % 2 == 1;
  // A team cuts K in even parts; its writes are word-aligned when each output row starts on an even element:
  // an odd row is then padded with a column (not possible without padding).
  const bool team_possible =
      f.k() >= 4 && p.reductions() > 0 && group > 1 && workers >= 2 && !(odd_rows && policy == StagingPolicy::kNone);
  // Cut rows when they are fewer than the idle cores and each core would still get a worthwhile part.
  constexpr std::uint64_t kMinTeamPart = 512;
  if (want_team > 1 && !team_possible) return std::nullopt;
  std::uint32_t team = std::max<std::uint32_t>(1, want_team);
  if (want_team == 0 && team_possible) {
    while (team * 2 <= group && rows * team * 2 <= workers && f.k() / (team * 2) * f.i() >= kMinTeamPart &&
           f.k() / (team * 2) >= 2) {
      team *= 2;
    }
  }
  if (team == 1) {
    // Rows of the busiest core; a tile is its whole share when that fits, else the share halved (in pairs).
    const std::uint64_t units = odd_rows ? (rows + 1) / 2 : rows, per_unit = odd_rows ? 2 : 1;
    const std::uint64_t parts = std::min(workers, units);
    const std::uint64_t min_tile = per_unit;
    // Tiles of up to kMaxTileElements: larger ones only grow the ldm a core holds (and the host memory that
    // backs it), not the DMA efficiency, which saturates well below (docs/benchmarks.md, fusion).
    const std::uint64_t row_elements = std::max<std::uint64_t>(1, f.k() * f.i());
    const std::uint64_t cap = std::max(min_tile, kMaxTileElements / row_elements / per_unit * per_unit);
    const std::uint64_t core_rows = fusion::ceil_div(units, parts) * per_unit;  // the busiest core's
    std::uint64_t tile = std::min({rows, core_rows, cap});
    while (tile > min_tile && !fits(tile, 1)) tile = std::max(min_tile, tile / 2 / per_unit * per_unit);
    if (fits(tile, 1)) {
      stream_inputs_cheaper_by_tiles(p, core_rows, tile, m.resident, slots, [&] { return fits(tile, 1); });
      m.tile_rows = tile;
      m.team = 1;
      m.row_pairs = odd_rows;
      m.workers = static_cast<std::uint32_t>(parts);
      m.ldm_bytes = bytes(tile, 1);
      return m;
    }
    if (!team_possible || want_team == 1) return std::nullopt;
    team = 2;  // one row does not fit one core: cut it
  }
  for (; team <= group && f.k() / team >= 2; team *= 2) {
    if (!fits(1, team)) {
      if (want_team != 0) return std::nullopt;
      continue;
    }
    m.tile_rows = 1;
    m.team = team;
    // Teams live inside one core group: a group of 6 cores holds one team of 4 (its other two cores idle).
    const std::uint64_t teams =
        std::max<std::uint64_t>(1, std::min<std::uint64_t>(workers / team, (group / team) * arch.core_groups));
    m.workers = static_cast<std::uint32_t>(std::min<std::uint64_t>(teams, rows) * team);
    m.ldm_bytes = bytes(1, team);
    return m;
  }
  return std::nullopt;
}

}  // namespace ldmsim
