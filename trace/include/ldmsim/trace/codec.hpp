// How DMA blocks of a trace file are encoded (docs/trace-format.md, "Codecs").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ldmsim {

/// Payload encoding of a trace block. Markers and end blocks are always raw.
enum class TraceCodec : std::uint32_t {
  kRaw = 0,   ///< the columns as little-endian arrays (32 bytes per event)
  kZstd = 1,  ///< issue and main columns delta-coded, then one zstd frame (format version 2 and later)
};

/// "raw" or "zstd".
std::string_view to_string(TraceCodec codec);
/// Parses "raw" or "zstd"; nullopt for anything else.
std::optional<TraceCodec> parse_trace_codec(std::string_view name);

}  // namespace ldmsim
