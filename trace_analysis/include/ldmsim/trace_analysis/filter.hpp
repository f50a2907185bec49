// Writes a smaller, valid trace file holding only the DMA requests and markers that match a filter (core group,
// core, op, minimum size, time window). Streams block by block; the header gains a "filter" object.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/types.hpp"
#include "ldmsim/trace/file.hpp"

namespace ldmsim {

/// Selection; unset fields match everything. A request matches the time window if [issue, end] overlaps
/// [from, to]; a marker if its cycle is inside. Launch begin/end markers of a selected group are always kept.
struct TraceFilter {
  std::optional<int> cg;
  std::optional<int> core;
  std::optional<DmaOp> op;
  std::uint32_t min_bytes = 0;
  std::optional<Cycle> from;
  std::optional<Cycle> to;

  bool keep(int group, const DmaEvent& e) const;
  bool keep(int group, const Marker& m) const;
  /// The filter as JSON (for the output header).
  nlohmann::json to_json() const;
};

/// Copies the matching part of `in` to `out` (written atomically). Returns the totals written.
TraceTotals filter_trace(const std::filesystem::path& in, const std::filesystem::path& out, const TraceFilter& filter);

}  // namespace ldmsim
