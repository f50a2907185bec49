// The kernel tiling library: how operators cut work for a local-store machine.
// - Work is partitioned over every core of every group (workers interleaved over the groups, so small jobs still
//   use every group's memory controller).
// - Outputs are written in destination tiles: a core owns whole 4-byte words of the output buffer, so no two cores
//   ever write the same word and every put is 4-byte legal when the buffer's total is even (the padding plan's job).
// - Inputs are read with get_range, which widens a read to 4-byte granularity inside the buffer, so a kernel may
//   read any element range (a row that starts at an odd element, a window of a plane) without padding.
// - Tiles are sized from the free ldm, so a sample, row or plane larger than the local store is cut into chunks.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <source_location>
#include <span>
#include <vector>

#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/ldmsim.hpp"

namespace ldmsim::tiling {

/// A half-open range of elements.
struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
};

/// This core's index among all cores of all groups (worker w runs in group w % groups).
inline std::size_t worker_index(const Core& core) {
  return static_cast<std::size_t>(core.id()) * static_cast<std::size_t>(core.arch().core_groups) +
         static_cast<std::size_t>(core.cg());
}
/// All cores of all groups.
inline std::size_t worker_count(const Core& core) {
  return static_cast<std::size_t>(core.arch().core_groups) * static_cast<std::size_t>(core.group_size());
}

inline std::size_t floor_even(std::size_t v) {
  return v & ~std::size_t{1};
}
inline std::size_t ceil_even(std::size_t v) {
  return v + (v & 1);
}

/// Part `part` of [0, total) cut into `parts` contiguous pieces whose inner boundaries are even, as equal as that
/// allows (empty when there are more parts than pairs of elements).
inline Range split_even(std::size_t total, std::size_t parts, std::size_t part) {
  const std::size_t pairs = (total + 1) / 2;
  const std::size_t base = pairs / parts, extra = pairs % parts;
  const std::size_t first = part * base + std::min(part, extra);
  const std::size_t count = base + (part < extra ? 1 : 0);
  return {std::min(total, 2 * first), std::min(total, 2 * (first + count))};
}

/// Smallest share worth a core for a streaming kernel (element-wise, re-layout): 4 KiB of fp16. Measured on
/// chain10 (docs/benchmarks.md): 2048 beats every core (0) by 1.3-1.5x and 1024 / 4096 by 2-15%.
inline constexpr std::size_t kStreamingShare = 2048;

/// The least share of a core in a gather whose contiguous runs are `run` elements long: each run is its own read,
/// so short runs get fewer elements per core and more cores read at once (down to one 128-byte transaction of
/// fp16); long runs get whole streaming shares.
inline std::size_t gather_share(std::uint64_t run) {
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(run, 64, kStreamingShare));
}

/// This core's share of an output buffer of `total` elements (even boundaries; see split_even). With
/// `min_part`, fewer cores take part when the shares would be smaller than that: a DMA of a few hundred bytes
/// costs nearly as much as one of a few KiB, so tiny shares on every core lose to larger ones on some.
inline Range my_share(const Core& core, std::size_t total, std::size_t min_part = 0) {
  const std::size_t workers = worker_count(core);
  const std::size_t parts = min_part == 0 ? workers : std::clamp<std::size_t>(total / min_part, 1, workers);
  const std::size_t me = worker_index(core);
  return me < parts ? split_even(total, parts, me) : Range{};
}

/// Tile size of streaming kernels that deal tiles round-robin (dealt_tiles): 16 KiB of fp16.
inline constexpr std::size_t kDealtTile = 8192;

/// Tiles of `tile` elements (even; the last may be shorter) of a buffer of `total` elements dealt round-robin:
/// tile i goes to worker i % workers. Consecutive tiles land on different cores and core groups, so every
/// group's DMA engine streams at once from the start; measured 3% faster than contiguous shares on relu.
inline std::vector<Range> dealt_tiles(const Core& core, std::size_t total, std::size_t tile) {
  tile = std::max<std::size_t>(2, floor_even(tile));
  std::vector<Range> out;
  const std::size_t step = worker_count(core) * tile;
  for (std::size_t at = worker_index(core) * tile; at < total; at += step)
    out.push_back({at, std::min(total, at + tile)});
  return out;
}

/// This core's share in whole units of `unit` elements (units of an odd size go in pairs, so boundaries stay
/// even) when there are at least as many units as cores; otherwise my_share. Kernels whose reads follow a unit
/// (a pooled plane) use it so that no unit is read by two cores.
inline Range my_unit_share(const Core& core, std::size_t total, std::size_t unit) {
  const std::size_t step = unit % 2 == 0 ? unit : 2 * unit;
  const std::size_t pieces = (total + step - 1) / step, workers = worker_count(core);
  if (unit == 0 || pieces < workers) return my_share(core, total);
  const std::size_t me = worker_index(core), base = pieces / workers, extra = pieces % workers;
  const std::size_t first = me * base + std::min(me, extra), count = base + (me < extra ? 1 : 0);
  return {std::min(total, first * step), std::min(total, (first + count) * step)};
}

/// Elements of fp16 each of `buffers` equal buffers can have in the free ldm (even, at least 2, at most `cap`),
/// leaving room for `reserve_bytes` of other allocations.
std::size_t fit_elements(Core& core, std::size_t buffers, std::size_t cap = 16384, std::size_t reserve_bytes = 0);
/// fit_elements for a local store of `capacity` bytes with `used` of them taken (the control core plans a kernel's
/// tiles with it: a kernel starts with an empty local store).
std::size_t fit_elements_in(std::uint64_t capacity, std::uint64_t used, std::size_t buffers, std::size_t cap = 16384);

/// The tile size, a multiple of `unit` (even) and at most `max_tile`, that cuts `size` elements into the fewest
/// tiles of nearly equal size (a 16725-element share with 16384-element buffers becomes two tiles of 8364, not
/// 16384 + 341: the DMA engine then overlaps two equal halves instead of serialising a big transfer and a stub).
/// A `unit` above max_tile gives max_tile.
inline std::size_t balanced_tile(std::size_t size, std::size_t max_tile, std::size_t unit = 2) {
  max_tile = std::max<std::size_t>(2, floor_even(max_tile));
  unit = std::max<std::size_t>(2, ceil_even(unit));
  if (unit > max_tile) return max_tile;
  max_tile = max_tile / unit * unit;
  const std::size_t count = std::max<std::size_t>(1, (size + max_tile - 1) / max_tile);
  const std::size_t even_cut = (size + count - 1) / count;
  return std::min(max_tile, std::max(unit, (even_cut + unit - 1) / unit * unit));
}

/// Calls fn(Range) for consecutive tiles covering r, of at most `tile` elements, multiples of `unit` and as equal
/// as that allows (balanced_tile; inner boundaries stay even when r.begin is).
template <typename F>
void for_each_tile(Range r, std::size_t tile, F&& fn, std::size_t unit = 2) {
  tile = balanced_tile(r.size(), tile, unit);
  for (std::size_t at = r.begin; at < r.end; at += tile) fn(Range{at, std::min(r.end, at + tile)});
}

/// A read issued by get_range: its handle and where the first requested element lands in the buffer.
struct RangeRead {
  DmaHandle handle;
  std::size_t first = 0;  ///< index in the ldm buffer of element r.begin
};

/// How a read is issued: by this core for itself (PE), by this core for every core of its mesh row (ROW: the
/// same ldm range of each receives the data) or of its whole group (BCAST), or not at all (plan only: where the
/// data of a read that a team's leader issues in ROW or BCAST mode lands). kRowOnRead and kBcastOnRead are ROW and
/// BCAST whose receivers read the buffer only after Core::ready_ldm or through Core::readable_ldm
/// (DmaRequest::replicate_on_read).
enum class ReadMode : std::uint8_t { kPe, kRow, kPlan, kBcast, kRowOnRead, kBcastOnRead };

/// A get of dst.size() elements from src (bsize/stride in bytes for a strided one) issued as `mode` says; an
/// empty handle for kPlan. `site`, here and in every helper below that issues requests: the kernel code the request
/// is made for, named by checking reports, lint warnings and traps (Core::dma); by default the helper's caller.
DmaHandle get_as(Core& core, ReadMode mode, LdmSpan<f16> dst, DevicePtr<const f16> src, std::size_t bsize_bytes = 0,
                 std::size_t stride_bytes = 0, std::source_location site = std::source_location::current());

/// get_range issued as `mode` says.
RangeRead get_range_as(Core& core, ReadMode mode, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total,
                       Range r, std::source_location site = std::source_location::current());

/// Reads elements r of a device buffer of `total` elements into buf (which must hold r.size() + 2 elements). The
/// read starts at the even element below r.begin and ends at the even element above r.end when that stays inside
/// the buffer; otherwise (an odd total: an unpadded tensor) it ends at r.end and the DMA engine judges it.
inline RangeRead get_range(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, Range r,
                           std::source_location site = std::source_location::current()) {
  return get_range_as(core, ReadMode::kPe, buf, base, total, r, site);
}

/// Reads the logical elements [first, first + count) of a tensor stored in `layout` at `base` into out[0, count)
/// (ldm memory), through the staging buffer `buf`: one widened read when their span in the layout fits buf
/// (padding between them included), else one read per contiguous run, in pieces of buf. Blocks until done.
void gather(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, const Layout& layout, std::size_t first,
            std::size_t count, f16* out, std::source_location site = std::source_location::current());
/// gather's reads run by run, never across the gaps between runs: for a box of a larger buffer, whose gaps hold
/// other data (another writer's rows, perhaps not written yet), not padding of its own.
void gather_runs(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, const Layout& layout, std::size_t first,
                 std::size_t count, f16* out, std::source_location site = std::source_location::current());
/// Where gather found a stretch of the logical elements it reads: elements [first + at, first + at + n) lie at
/// from[0, n), in the staging buffer, until the next read through it.
using GatheredRun = std::function<void(std::size_t at, const f16* from, std::size_t n)>;
/// gather's reads, each stretch handed to `use` where it lies in `buf` instead of copied to ldm: for a kernel that
/// converts what it reads at once (the reads, and so the simulated run, are gather's).
void gather_each(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, const Layout& layout, std::size_t first,
                 std::size_t count, const GatheredRun& use,
                 std::source_location site = std::source_location::current());

/// Writes this core's destination tiles (a share of at least `min_share` elements: kStreamingShare for streaming
/// kernels, less when each output element costs many reads) of an output stored in `layout` at `out` from logical
/// elements: for each tile, fill(first, last, staging, logical) must put logical elements
/// [first, last) of the output into logical[0, last - first) (ldm, reading through `staging`, which holds twice a
/// tile); they are then placed in the tile by the layout (padding zero) and the tile is put.
template <typename F>
void write_gathered_tiles(Core& core, DevicePtr<f16> out, const Layout& layout, F&& fill,
                          std::size_t min_share = kStreamingShare,
                          std::source_location site = std::source_location::current());

/// A run of a layout: `count` elements from element `offset`.
struct Run {
  std::size_t offset = 0, count = 0;
};

/// Puts buf's elements, packed one run after another, to `runs` of a device buffer (whole 4-byte words each):
/// consecutive runs of one length evenly spaced go as one strided request. Returns the handles to wait for.
std::vector<DmaHandle> put_runs(Core& core, DevicePtr<f16> base, LdmSpan<f16> buf, std::span<const Run> runs,
                                std::source_location site = std::source_location::current());

/// write_gathered_tiles for a destination whose layout's gaps are not its own (DeviceTensor::owns_padding): each
/// core's share of the logical elements (whole runs where that gives every core work), in tiles, a tile's runs put
/// by put_runs; nothing between the runs is written. Runs must be whole 4-byte words (an even length at an even
/// offset).
template <typename F>
void write_gathered_runs(Core& core, DevicePtr<f16> out, const Layout& layout, F&& fill,
                         std::size_t min_share = kStreamingShare,
                         std::source_location site = std::source_location::current());

/// Writes buf[0, r.size()) to elements r of a device buffer (a destination tile: r.begin even).
inline DmaHandle put_range(Core& core, DevicePtr<f16> base, LdmSpan<f16> buf, Range r,
                           std::source_location site = std::source_location::current()) {
  return core.put(base + r.begin, LdmSpan<const f16>(buf.first(r.size())), site);
}

/// Destination tiles written asynchronously from two alternating ldm buffers: a buffer's previous put is waited for
/// only when the buffer comes round again, so reading the next tile overlaps writing the last. Call finish()
/// before the kernel returns (a kernel may not exit with DMA in flight).
class TileWriter {
 public:
  TileWriter(Core& core, DevicePtr<f16> base, std::size_t tile)
      : core_(&core), base_(base), buffers_{core.ldm().alloc<f16>(tile), core.ldm().alloc<f16>(tile)} {}
  /// The buffer for the next tile (its previous put done).
  LdmSpan<f16> next() {
    slot_ ^= 1;
    pending_[slot_].wait();
    return buffers_[slot_];
  }
  /// Puts the buffer next() returned to elements r of the output.
  void put(Range r, std::source_location site = std::source_location::current()) {
    pending_[slot_] = put_range(*core_, base_, buffers_[slot_], r, site);
  }
  void finish() {
    pending_[0].wait();
    pending_[1].wait();
  }

 private:
  Core* core_;
  DevicePtr<f16> base_;
  std::array<LdmSpan<f16>, 2> buffers_;
  std::array<DmaHandle, 2> pending_{};
  std::size_t slot_ = 1;
};

template <typename F>
void write_gathered_tiles(Core& core, DevicePtr<f16> out, const Layout& layout, F&& fill, std::size_t min_share,
                          std::source_location site) {
  const Range share = my_share(core, layout.total, min_share);
  if (share.empty()) return;
  // Destination tiles are half the staging buffer, so a source span with up to 2x padding is still one read.
  const std::size_t tile = std::min(fit_elements(core, 4), ceil_even(share.size()));
  auto staging = core.ldm().alloc<f16>(2 * tile + 2);
  auto logical = core.ldm().alloc<f16>(tile);
  auto dst = core.ldm().alloc<f16>(tile);
  for_each_tile(share, tile, [&](Range t) {
    auto placed = dst.first(t.size()).span();
    std::fill(placed.begin(), placed.end(), f16{});
    const std::size_t first = layout.logical_at_or_after(t.begin), last = layout.logical_at_or_after(t.end);
    if (first < last) {
      fill(first, last, staging, logical);
      for_each_run(layout, first, last, [&](std::size_t l, std::size_t offset, std::size_t n) {
        std::copy_n(logical.data() + (l - first), n, placed.data() + (offset - t.begin));
      });
    }
    put_range(core, out, dst, t, site).wait();
  });
}

template <typename F>
void write_gathered_runs(Core& core, DevicePtr<f16> out, const Layout& layout, F&& fill, std::size_t min_share,
                         std::source_location site) {
  // Shares and tiles of whole runs where that gives every core work, so a tile's runs go as one strided put.
  std::size_t run = 0;
  for_each_run(layout, 0, layout.shape.elements(), [&](std::size_t, std::size_t, std::size_t n) {
    if (run == 0) run = n;
  });
  const std::size_t runs_per_share = run == 0 ? 1 : std::max<std::size_t>(1, (min_share + run - 1) / run);
  const Range share = my_unit_share(core, layout.shape.elements(), run * runs_per_share);
  if (share.empty()) return;
  const std::size_t unit = std::max<std::size_t>(2, run % 2 == 0 ? run : 2 * run);
  const std::size_t tile = std::min(fit_elements(core, 4), ceil_even(share.size()));
  auto staging = core.ldm().alloc<f16>(2 * tile + 2);
  auto logical = core.ldm().alloc<f16>(tile);
  std::vector<Run> runs;
  for_each_tile(
      share, tile,
      [&](Range t) {
        fill(t.begin, t.end, staging, logical);
        runs.clear();
        for_each_run(layout, t.begin, t.end, [&](std::size_t, std::size_t offset, std::size_t n) {
          runs.push_back({offset, n});
        });
        for (DmaHandle& put : put_runs(core, out, logical, runs, site)) put.wait();
      },
      unit <= tile ? unit : 2);
}

}  // namespace ldmsim::tiling
