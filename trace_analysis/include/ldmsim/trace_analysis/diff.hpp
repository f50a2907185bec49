// Compares two trace files: run cycles, requests and bytes per core group and per op, and the first event
// (DMA request or marker, in file order) where they diverge. Streams both files once, side by side.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// Requests and bytes of one side.
struct DiffCounts {
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const DiffCounts&, const DiffCounts&) = default;
};

/// The result of diff_traces; `a` and `b` sides everywhere.
struct TraceDiff {
  Cycle cycles_a = 0;
  Cycle cycles_b = 0;
  std::map<int, std::pair<DiffCounts, DiffCounts>> per_cg;
  std::map<std::string, std::pair<DiffCounts, DiffCounts>> per_op;  ///< "get", "put"
  bool identical = true;               ///< same events and markers in the same order (headers are not compared)
  std::uint64_t divergence_index = 0;  ///< position of the first differing item in file order (if !identical)
  std::string divergence;              ///< human-readable description of the first differing item of each side

  nlohmann::json to_json() const;
  std::string format() const;
};

/// Streams both files; throws TraceFormatError if either is malformed.
TraceDiff diff_traces(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace ldmsim
