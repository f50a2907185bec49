// Shared input handling of `ldmsim trace` and `ldmsim report`: a trace file or a run directory, the run's
// stats.json next to it, and the mapping of malformed traces to ConfigError (exit code 2).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace_analysis/summary.hpp"

namespace ldmsim::cli {

/// The trace to read and the stats.json to merge (empty path: none).
struct TraceInput {
  std::filesystem::path trace;
  std::filesystem::path stats;
};

/// `path` is a trace file or a run directory (RUN_DIR/trace.ldmtrace); `stats` overrides the stats.json found next
/// to the trace. Throws ConfigError if there is no trace.
TraceInput resolve_trace_input(const std::string& path, const std::string& stats = {});

/// Merges busy/waiting fractions from `stats` into `summary`; a stats file of another run is ignored (with a
/// warning on stderr when `explicit_file`).
void attach_run_stats(TraceSummary& summary, const std::filesystem::path& stats, bool explicit_file);

/// The run's layers from `input.stats`, under the same rule as attach_run_stats (its cycles must be the trace
/// header's); empty without a matching stats.json.
std::vector<LayerSpan> run_layers(const TraceInput& input, bool explicit_file);

/// Runs f(); a TraceFormatError becomes a ConfigError with the same message (exit code 2).
template <typename F>
auto guarded_trace_call(F&& f) -> decltype(f()) {
  try {
    return std::forward<F>(f)();
  } catch (const TraceFormatError& e) {
    throw ConfigError(std::string("malformed trace: ") + e.what());
  }
}

}  // namespace ldmsim::cli
