// Streaming exports of a trace file: Chrome Trace Event JSON (opens in Perfetto UI and chrome://tracing) and CSV
// with one row per DMA request. Both read one block at a time and write as they go (memory bounded by the
// cores and time bins, not the events). Layout of the outputs: docs/trace-tools.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <vector>

#include "ldmsim/trace_analysis/layers.hpp"

namespace ldmsim {

/// What an export wrote.
struct ExportCounts {
  std::uint64_t requests = 0;  ///< DMA requests written
  std::uint64_t markers = 0;   ///< markers written (chrome only)
};

/// Chrome Trace Event JSON: process "cg N" per core group, thread "core R,C" per core (plus "core R,C dma K"
/// lanes for requests that overlap on one core), DMA requests as complete events from issue to completion,
/// launches as complete events on a "launches" thread, barriers / core exits / faults / lint warnings as instant
/// events, and a "DMA bandwidth" counter track per group. `layers` (a run's stats.json, layers.hpp) become slices
/// of a "layers" process shown first. Timestamps: microseconds of simulated time.
/// Throws TraceFormatError for a malformed trace.
ExportCounts export_chrome_json(const std::filesystem::path& trace, std::ostream& out, std::size_t time_bins = 200,
                                const std::vector<LayerSpan>& layers = {});

/// CSV with a header row and one row per DMA request, in file order.
ExportCounts export_csv(const std::filesystem::path& trace, std::ostream& out);

}  // namespace ldmsim
