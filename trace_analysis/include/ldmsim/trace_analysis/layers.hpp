// The layers of a run, read from its stats.json ("ops": one entry per op with its name, cycles on the machine's
// clock, bound and DMA bytes): what `ldmsim report` tables and draws as a timeline and the Chrome export shows
// as slices on a "layers" track.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// One op of a run as a span of simulated time.
struct LayerSpan {
  std::string name;
  std::string type;
  std::string bound;  ///< compute, dma, sync or none
  Cycle start = 0;
  Cycle end = 0;
  std::uint64_t dma_bytes = 0;
  double peak_fraction = 0;
  /// The per-layer figures of stats.json (docs/workload-format.md); unset when the stats lack them.
  std::optional<std::uint64_t> ldm_high_water;
  std::optional<double> arithmetic_intensity;
  std::optional<double> roofline_fraction;
  std::string roofline_limit;  ///< compute or dma; empty when unknown
};

/// Most layers read from one stats file (a stats.json is at most 16 MiB; this bounds the tables drawn).
inline constexpr std::size_t kMaxLayers = 100000;

/// The layers of a stats.json tree, in run order. Entries without a string `name` and `type` and unsigned
/// `start_cycle` <= `end_cycle` (stats of older runs, other tools) are skipped; never throws.
std::vector<LayerSpan> layers_from_stats(const nlohmann::json& stats);

nlohmann::json to_json(const LayerSpan& layer);

}  // namespace ldmsim
