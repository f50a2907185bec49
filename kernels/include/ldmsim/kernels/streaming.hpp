// Streaming kernels (element-wise, affine maps): inputs that share the output's placement flow through ldm in
// dealt tiles, double-buffered in both directions. One loop for every such kernel, so the overlap of reads,
// compute and writes is tuned in one place.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <source_location>
#include <span>
#include <vector>

#include "ldmsim/kernels/tiling.hpp"
#include "ldmsim/sim/fp16.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::tiling {

/// Inputs a streaming kernel can read per tile.
inline constexpr std::size_t kMaxStreamedInputs = 4;

/// The largest tile `streamed` inputs plus the output can stream in the free ldm (two buffers each), at most
/// kDealtTile.
inline std::size_t streaming_tile(Core& core, std::size_t streamed) {
  return fit_elements(core, 2 * (streamed + 1), kDealtTile);
}

/// The least tile a small output is cut into. A 1 KiB request still moves at about 60% of a 16 KiB one's rate on
/// the measured block-size curve, so a smaller output takes fewer cores rather than smaller tiles.
inline constexpr std::size_t kLeastSpreadTile = 512;

/// The tile for an output of `total` elements: `max_tile`, or less when dealing tiles of `max_tile` would leave
/// cores idle. Each worker then takes about one tile of at least `least` elements (kLeastSpreadTile, or more when
/// every core with a tile also reads an input whole), so a 16 KiB output runs on 16 cores instead of one.
inline std::size_t spread_tile(const Core& core, std::size_t total, std::size_t max_tile,
                               std::size_t least = kLeastSpreadTile) {
  const std::size_t workers = std::max<std::size_t>(1, worker_count(core));
  const std::size_t per_worker = ceil_even((total + workers - 1) / workers);
  return std::min(max_tile, std::max({kLeastSpreadTile, ceil_even(least), per_worker}));
}

/// Streams buffers `inputs` (each with the output's placement: element i of an input goes with element i of the
/// output) through this core's dealt tiles of an output of `total` elements, tiles at most `max_tile`. For each
/// tile t, calls fn(t, in, out): in[k] holds inputs[k][t] as floats, fn writes out[0, t.size()) (padding positions
/// included) and charges its compute; the helper rounds out to fp16 and puts it at t. Tile n + 1 is read while
/// tile n is computed; a buffer's put is waited for only when that buffer comes round again, after the compute.
template <typename F>
void stream_dealt_tiles(Core& core, std::span<const DevicePtr<const f16>> inputs, DevicePtr<f16> out, std::size_t total,
                        std::size_t max_tile, F&& fn, std::source_location site = std::source_location::current()) {
  const std::vector<Range> tiles = dealt_tiles(core, total, max_tile);
  if (tiles.empty()) return;
  const std::size_t tile = tiles.front().size(), count = inputs.size();
  std::array<std::array<LdmSpan<f16>, kMaxStreamedInputs>, 2> in{};
  std::array<std::array<DmaHandle, kMaxStreamedInputs>, 2> gets{};
  for (auto& slot : in) {
    for (std::size_t k = 0; k < count; ++k) slot[k] = core.ldm().alloc<f16>(tile);
  }
  std::array<LdmSpan<f16>, 2> ys = {core.ldm().alloc<f16>(tile), core.ldm().alloc<f16>(tile)};
  std::array<DmaHandle, 2> puts{};
  // Host floats of the tile, never read before written: left uninitialised (every core of a launch holds its own).
  const auto xs = std::make_unique_for_overwrite<float[]>(count * tile);
  const auto result = std::make_unique_for_overwrite<float[]>(tile);
  std::array<std::span<const float>, kMaxStreamedInputs> views{};
  // Inputs in another group's memory are read first: their bytes cross the link after the engine serves them, so
  // they cross it while the local reads are served.
  std::array<std::size_t, kMaxStreamedInputs> order{};
  std::size_t ordered = 0;
  for (const bool remote : {true, false}) {
    for (std::size_t k = 0; k < count; ++k) {
      const auto window = MainMemory::window_of(inputs[k].addr(), core.arch().main_memory_bytes_per_cg);
      if ((window != static_cast<std::uint64_t>(core.node_cg())) == remote) order[ordered++] = k;
    }
  }
  auto issue = [&](Range r, std::size_t slot) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t k = order[i];
      gets[slot][k] = core.get(in[slot][k].first(r.size()), inputs[k] + r.begin, site);
    }
  };
  issue(tiles[0], 0);
  for (std::size_t n = 0, slot = 0; n < tiles.size(); ++n, slot ^= 1) {
    const Range t = tiles[n];
    if (n + 1 < tiles.size()) issue(tiles[n + 1], slot ^ 1);
    for (std::size_t k = 0; k < count; ++k) {
      gets[slot][k].wait();
      const std::span<float> x(xs.get() + k * tile, t.size());
      halves_to_floats(in[slot][k].first(t.size()).span(), x);
      views[k] = x;
    }
    fn(t, std::span<const std::span<const float>>(views.data(), count), std::span<float>(result.get(), t.size()));
    puts[slot].wait();  // the previous put from this buffer must be done before it is overwritten
    floats_to_halves(std::span<const float>(result.get(), t.size()), ys[slot].first(t.size()).span());
    puts[slot] = put_range(core, out, ys[slot], t, site);
  }
  puts[0].wait();
  puts[1].wait();
}

}  // namespace ldmsim::tiling
