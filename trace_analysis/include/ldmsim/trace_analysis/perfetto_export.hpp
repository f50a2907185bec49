// Native Perfetto export of a trace file: protobuf TracePackets (trace_analysis/proto/perfetto_trace_subset.proto
// names the fields) that the Perfetto UI and trace_processor open directly. Streams the file one block at a time.
#pragma once

#include <filesystem>
#include <ostream>
#include <vector>

#include "ldmsim/trace_analysis/export.hpp"
#include "ldmsim/trace_analysis/layers.hpp"

namespace ldmsim {

struct PerfettoOptions {
  /// Packets deflated in batches into TracePacket.compressed_packets (Perfetto inflates them on load); off: the
  /// packets as they are, which `protoc --decode` reads.
  bool compress = true;
};

/// One track per core group and, under it, one per core ("core R,C", plus "core R,C dma K" lanes for requests that
/// overlap on one core) with each DMA request as a slice from issue to completion named "get" or "put" (interned)
/// carrying its bytes; a "launches" track per group with each launch as a slice named by its kernel; the run's
/// layers (stats.json) as slices of a "layers" track. Timestamps: nanoseconds of simulated time. Throws
/// TraceFormatError for a malformed trace.
ExportCounts export_perfetto(const std::filesystem::path& trace, std::ostream& out,
                             const std::vector<LayerSpan>& layers = {}, PerfettoOptions options = {});

}  // namespace ldmsim
