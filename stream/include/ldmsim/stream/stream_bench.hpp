// STREAM over DMA on one simulated core group (the kernels of the swCandle measurement used to calibrate the
// DMA timing model): each core gets a block into its ldm, computes locally, puts the result back. Shared by
// `ldmsim bench stream` and the calibration test, so both run exactly the same code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/types.hpp"

namespace ldmsim::bench {

/// The four STREAM kernels: copy c = a, scale b = s*c, add c = a + b, triad a = b + s*c.
enum class StreamKernel : std::uint8_t { kCopy, kScale, kAdd, kTriad };
/// How the inputs reach the ldm: PE (each core gets its own block), BCAST (core 0 gets one block per round into
/// every core's ldm) or ROW (core 0 of each row gets one block per round into every core of its row); each core
/// then writes its own output block.
enum class StreamMode : std::uint8_t { kPe, kBcast, kRow };

std::string_view to_string(StreamKernel kernel) noexcept;
std::string_view to_string(StreamMode mode) noexcept;
/// Parses "copy" | "scale" | "add" | "triad" and "pe" | "bcast" | "row"; nullopt otherwise.
std::optional<StreamKernel> parse_stream_kernel(std::string_view name);
std::optional<StreamMode> parse_stream_mode(std::string_view name);

/// One STREAM run. Sizes are bytes; elements are doubles (8 bytes).
struct StreamConfig {
  StreamKernel kernel = StreamKernel::kCopy;
  StreamMode mode = StreamMode::kPe;
  std::uint64_t block_bytes = 8;  ///< contiguous block (bsize when gap_bytes > 0); a multiple of 8
  std::uint64_t gap_bytes = 0;    ///< > 0: strided requests, `gap_bytes` skipped between blocks (athread stride)
  /// Length of one strided request (a multiple of block_bytes); 0 = as many blocks as fit in 24 KiB (the
  /// measurement's largest block), at least one. Ignored for contiguous requests (one block per request).
  std::uint64_t request_bytes = 0;
  int cores = 0;                    ///< cores that stream (ids 0..cores-1); 0 = the whole group
  std::uint64_t offset_bytes = 80;  ///< arrays start this far past a 256-byte boundary (measurement: 10 doubles)
  std::uint64_t rounds = 0;         ///< requests per core per array; 0 = about 256 KiB per core, 16..2048
  bool verify = false;              ///< initialise the inputs and check every output element
  /// Gets only (swCandle's BCAST runs): no puts and no barriers; in BCAST / ROW mode only the issuing cores run
  /// (back-to-back gets, each waited, then the local loop) and the rest of the group idles.
  bool get_only = false;
};

/// What a run measured on the simulated machine.
struct StreamResult {
  std::uint64_t request_bytes = 0;  ///< bytes of one request (the ldm side)
  std::uint64_t rounds = 0;         ///< requests per core per array
  int cores = 0;
  Cycle cycles = 0;  ///< the core group's elapsed cycles for the launch
  double seconds = 0;
  /// STREAM's count: 16 B per element (copy, scale) or 24 B (add, triad), every core's elements; with get_only,
  /// 8 or 16 B per element received in an ldm (swCandle's BCAST count: 64 x the bytes read for a broadcast).
  std::uint64_t stream_bytes = 0;
  std::uint64_t dma_bytes = 0;  ///< bytes the DMA engine moved to and from main memory
  double mbps = 0;              ///< stream_bytes / seconds / 1e6 (STREAM's MB/s)
  double dma_mbps = 0;          ///< dma_bytes / seconds / 1e6
};

/// A verified run found a wrong output element (a simulator bug, not bad input).
class StreamVerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs one STREAM kernel on core group 0 of a fresh machine of `arch` (no trace). Throws ConfigError for a
/// configuration that cannot run (sizes not multiples of 8, buffers larger than the ldm, ...) and
/// StreamVerifyError if `verify` finds a wrong element.
StreamResult run_stream(const Arch& arch, const StreamConfig& config);

/// One measured point of a STREAM-over-DMA curve.
struct MeasuredPoint {
  std::uint64_t block_bytes = 0;
  double mbps = 0;
};

/// Reads a measurement CSV (`#` comments, a header naming block_bytes and a *_MBps column). Throws
/// ConfigError naming the file and line on malformed input.
std::vector<MeasuredPoint> read_measurements(const std::filesystem::path& csv);
/// The same from the CSV's text; `origin` names it in errors.
std::vector<MeasuredPoint> parse_measurements(std::string_view csv, const std::string& origin);

/// The SW26010 STREAM copy measurement kept in the repository (stream/data/sw26010_dma_stream_copy.csv, compiled
/// into the library), its source named in its comments.
std::string_view sw26010_copy_csv();
std::vector<MeasuredPoint> sw26010_copy_measurements();

/// Simulated vs measured for every point of `points` (contiguous blocks, `base` gives everything else).
struct SweepRow {
  MeasuredPoint measured;
  StreamResult simulated;
  double relative_error = 0;  ///< simulated / measured - 1
};
std::vector<SweepRow> sweep(const Arch& arch, const StreamConfig& base, const std::vector<MeasuredPoint>& points);

}  // namespace ldmsim::bench
