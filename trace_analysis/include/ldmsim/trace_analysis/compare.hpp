// `ldmsim compare`: two or more runs of one model side by side, layer by layer. Layers are lined up by the
// layers of the model as loaded that each op ran (stats.json's "source_layers"; the op's name for older stats):
// a fused op and the unfused ops it stands for share a row, so runs with and without fusion (or with another
// split, arch or staging) compare row by row.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// One run's share of a row: the sums over the run's ops in it (none: the run has no op there).
struct CompareCell {
  std::size_t ops = 0;
  Cycle cycles = 0;
  std::uint64_t dma_bytes = 0;
  std::optional<std::uint64_t> ldm_high_water;  ///< the largest of its ops'; unset when the run measured none
  std::string bound;                            ///< of its op with the most cycles; "-" for no op
  double seconds = 0;
  double roofline_seconds = 0;
  bool has_roofline = false;       ///< every op carried roofline_seconds
  std::vector<std::string> names;  ///< the ops' names in that run ("fused#3" style labels included)
  /// Its roofline_seconds over its seconds (the fraction of the roof it reached); unset without the figures.
  std::optional<double> roofline_fraction() const;
};

/// A set of loaded layers that every run ran as whole ops.
struct CompareRow {
  std::vector<std::string> layers;  ///< the loaded layers, in the first run's order
  std::vector<CompareCell> runs;    ///< one per run
};

/// A run as compare reads it.
struct ComparedRun {
  std::string label;  ///< what the user named (a run directory or stats file)
  std::string workload, arch;
  Cycle cycles = 0;
  std::uint64_t dma_bytes = 0;
  std::uint64_t ldm_high_water = 0;
  std::size_t ops = 0;
  bool fusion = false;
};

struct Comparison {
  std::vector<ComparedRun> runs;
  std::vector<CompareRow> rows;  ///< in the first run's order, then rows only later runs have
};

/// Lines up the runs' stats.json trees (each as read from `labels[i]`). ConfigError (naming the label) for a tree
/// without an "ops" array, or an op without a name or cycles; fewer than two runs is a ConfigError too.
Comparison compare_runs(const std::vector<nlohmann::json>& stats, const std::vector<std::string>& labels);

/// The rows as a text table: per run cycles, DMA bytes, ldm, bound and roofline fraction, with each later run's
/// ratio to the first; then the totals. `top` > 0 keeps the rows whose cycles changed most (in row order).
std::string format_comparison(const Comparison& comparison, std::size_t top = 0);

nlohmann::json to_json(const Comparison& comparison);

/// How the text and the page name run `i`: A, B, ... Z, then R27, R28, ...
std::string run_letter(std::size_t i);

}  // namespace ldmsim
