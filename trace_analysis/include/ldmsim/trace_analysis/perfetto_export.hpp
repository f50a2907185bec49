// Native Perfetto export of a trace file: protobuf TracePackets (trace_analysis/proto/perfetto_trace_subset.proto
// names the fields) that the Perfetto UI and trace_processor open directly. Streams the file one block at a time,
// after a first pass that reads only its markers (the kernel of each launch).
#pragma once

#include <filesystem>
#include <ostream>
#include <vector>

#include "ldmsim/trace_analysis/export.hpp"
#include "ldmsim/trace_analysis/layers.hpp"

namespace ldmsim {

/// How packets are compressed, in batches that Perfetto decompresses on load.
enum class PerfettoCompression {
  kZstd,     ///< TracePacket.zstd_compressed_packets: fast; read by recent Perfetto (the UI at ui.perfetto.dev)
  kDeflate,  ///< TracePacket.compressed_packets: about 4x slower to write; read by every Perfetto version
  kNone,     ///< the packets as they are, which `protoc --decode` reads
};

struct PerfettoOptions {
  PerfettoCompression compression = PerfettoCompression::kZstd;
};

/// One track per core group and, under it, one per core ("core R,C", plus "core R,C dma K" lanes for requests that
/// overlap on one core) with each DMA request as a slice from issue to completion named "get" or "put", annotated
/// with its bytes, its kernel (the launch it was issued in) and its layer (the stats.json op whose span holds its
/// issue cycle); names and annotation strings are interned once. A "launches" track per group with each launch as a
/// slice named by its kernel; the run's layers (stats.json) as slices of a "layers" track. Timestamps: nanoseconds
/// of simulated time. Throws TraceFormatError for a malformed trace.
ExportCounts export_perfetto(const std::filesystem::path& trace, std::ostream& out,
                             const std::vector<LayerSpan>& layers = {}, PerfettoOptions options = {});

/// One rank's trace of an MPI run (rank_summary.hpp: rank_traces).
struct RankTrace {
  int rank = 0;
  std::filesystem::path file;
};

/// An MPI run's ranks in one Perfetto trace: a process "rank R" per rank holding its groups' tracks as above and
/// an "MPI" track with each MPI call its header lists (mpi.calls) as a slice named by the call, annotated with its
/// peer (-1: none) and bytes. Throws TraceFormatError for a malformed trace.
ExportCounts export_perfetto_ranks(const std::vector<RankTrace>& ranks, std::ostream& out,
                                   PerfettoOptions options = {});

}  // namespace ldmsim
