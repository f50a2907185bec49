// Private: the host memory protobuf would take to parse an ONNX model, counted from the file's wire format before
// protobuf reads it, so that a model whose parsed form would not fit is refused first (docs/onnx.md, "Memory").
// Parsed, a file can grow many times over: a packed zero is one byte and an int64 eight, an empty NodeProto two
// bytes and a heap object of hundreds, an unknown field two bytes and an entry of sixteen.
#pragma once

#include <cstdint>
#include <string>

#include "ldmsim/sim/host_memory_limit.hpp"

namespace ldmsim::onnx_import {

/// An upper bound of the heap a parsed ModelProto holds, and the field adding the most to it.
struct ParseBound {
  std::uint64_t bytes = 0;
  /// Where that field is and what it holds: "graph 'g' node 'relu_1' attribute 'perm' ints: 300000000 values".
  std::string largest;
  std::uint64_t largest_bytes = 0;  ///< what that field adds itself (the messages inside it apart)
  /// The walk stopped where protobuf's parse fails too (truncated, a bad key or length): `bytes` counts up to there.
  bool malformed = false;
};

/// Walks the ModelProto in `fd` (a regular file of `size` bytes, read with pread) by its schema, nested messages
/// and unknown fields included, allocating nothing in proportion to the file, and counts what protobuf 3.21
/// allocates for each field (no arena): repeated values at twice their size (the capacity of a growing array),
/// each message, string and unknown field as its own heap block with the allocator's overhead.
ParseBound parsed_model_bound(int fd, std::uint64_t size);

/// Parsed, a model may take at most this many times its file's size, plus kParseSlackBytes.
inline constexpr std::uint64_t kParseGrowth = 4;
inline constexpr std::uint64_t kParseSlackBytes = std::uint64_t{256} << 20;

/// ConfigError naming `file`, the bound, the largest field and the limit that applied when `bound` exceeds
/// kParseGrowth * file_bytes + kParseSlackBytes or what `host` offers (when known).
void check_parse_bound(const ParseBound& bound, std::uint64_t file_bytes, const HostMemoryLimit& host,
                       const std::string& file);

}  // namespace ldmsim::onnx_import
