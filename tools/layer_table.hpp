// Per-layer text of `ldmsim run`: the progress line of each finished layer and the closing table of the slowest
// layers, both read from the layer's entry in stats.json ("ops").
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace ldmsim::cli {

/// "[i/n E.Es] name (type): 25.54 ms simulated, bound B, 1.5 MiB DMA", E.E the host seconds since the run began.
std::string layer_progress_line(const nlohmann::json& op, std::size_t op_count, double elapsed_seconds);

/// The `count` slowest layers of a run (by simulated cycles; ties by index), one row each: name, type, cycles,
/// share of the run's cycles, bound, DMA bytes, ldm high-water, arithmetic intensity, fraction of the machine's
/// fp32 peak and of the roofline with the roof that limits it ("-" for what the run did not measure); empty for
/// no ops.
std::string slowest_layers_table(const nlohmann::json& stats, std::size_t count);

/// `run --explain`: for each op that reported its choices (metrics.explain), its name and one indented line per
/// choice; empty when none did.
std::string op_choices_text(const nlohmann::json& stats);

}  // namespace ldmsim::cli
