// The versioned binary trace file (.ldmtrace): magic, version, a JSON header, then self-describing blocks
// (DMA chunks as raw little-endian columns, markers, an end block with totals), one core group after another
// in cg order, so the bytes depend only on what was recorded. Byte layout and policy: docs/trace-format.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/trace/codec.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace ldmsim {

namespace detail {
class BlockCodec;
}

/// The 8 bytes every trace file starts with.
inline constexpr std::string_view kTraceMagic = "LDMTRACE";
/// The format version this build writes (and the newest it reads).
inline constexpr std::uint32_t kTraceFormatVersion = 2;
/// The oldest format version this build reads.
inline constexpr std::uint32_t kTraceOldestFormatVersion = 1;
/// Largest event count of one DMA block (writers split larger chunks; readers reject more).
inline constexpr std::uint32_t kTraceMaxBlockEvents = 65536;
/// Deepest nesting of arrays and objects the reader accepts in the JSON header.
inline constexpr std::size_t kTraceMaxHeaderDepth = 256;
/// Largest marker count of one markers block.
inline constexpr std::uint32_t kTraceMaxBlockMarkers = 4096;

/// Block types.
enum class TraceBlockKind : std::uint32_t { kDma = 1, kMarkers = 2, kEnd = 3 };

/// A trace file that is truncated, corrupted or of an unknown version. what() reads
/// "<file>: <problem> at byte <offset> (<detail>)".
class TraceFormatError : public std::runtime_error {
 public:
  TraceFormatError(const std::filesystem::path& file, std::uint64_t offset, const std::string& problem,
                   const std::string& detail = {});
  const std::filesystem::path& file() const noexcept { return file_; }
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::filesystem::path file_;
  std::uint64_t offset_;
};

/// Counts carried by the end block (and kept while writing or reading).
struct TraceTotals {
  std::uint64_t dma_events = 0;
  std::uint64_t markers = 0;
  std::uint64_t blocks = 0;  ///< DMA and markers blocks, not counting the end block
  std::uint64_t groups = 0;  ///< distinct core groups
  friend bool operator==(const TraceTotals&, const TraceTotals&) = default;
};

/// One block as the reader returns it: a DMA chunk or a list of markers of core group `cg`.
struct TraceBlock {
  TraceBlockKind kind = TraceBlockKind::kDma;
  int cg = 0;
  DmaChunk chunk;               ///< kDma
  std::vector<Marker> markers;  ///< kMarkers
};

/// Streams a trace file: open(), then groups in increasing cg order, then finish(). DMA blocks are encoded with
/// the codec given to open() (zstd by default); a recorder's spilled blocks in that codec are copied as they
/// are, so writing a spilled trace costs a file copy. Writes to `path.tmp` and
/// renames on finish(), so a reader never sees a half-written file; a writer destroyed before finish()
/// removes the temporary. I/O failures throw std::runtime_error naming the path; misuse (groups out of
/// order, calls on a closed writer) throws std::logic_error.
class TraceWriter {
 public:
  TraceWriter();
  TraceWriter(const std::filesystem::path& path, const nlohmann::json& header, TraceCodec codec = TraceCodec::kZstd);
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter();

  /// Starts the file; `header` must be a JSON object (arch, run info, "fault").
  void open(const std::filesystem::path& path, const nlohmann::json& header, TraceCodec codec = TraceCodec::kZstd);
  /// Writes a whole group: its spilled blocks, then its DMA chunks and markers still in memory (always at least
  /// one markers block, so empty groups are kept). cg must be greater than every cg written before.
  void write_group(const TraceRecorder& group);
  /// Lower-level streaming: one chunk of group `cg` (cg must not decrease between calls).
  void write_dma(int cg, const DmaChunk& chunk);
  /// Lower-level streaming: markers of group `cg` (an empty span writes an empty markers block).
  void write_markers(int cg, std::span<const Marker> markers);
  /// Writes the end block, flushes and renames the temporary over path (see AtomicFile).
  void finish();

  bool is_open() const { return open_; }
  TraceCodec codec() const { return codec_; }
  const TraceTotals& totals() const { return totals_; }

 private:
  void check_cg(int cg, bool new_group);
  void write_block(std::span<const unsigned char> block);  // one encoded block; counts it in totals_
  void write_bytes(const void* data, std::size_t size);
  [[noreturn]] void fail(const std::string& what);

  std::filesystem::path path_;
  std::unique_ptr<AtomicFile> file_;  // the file being written (a temporary until finish() renames it)
  bool open_ = false;
  std::int64_t last_cg_ = -1;
  TraceCodec codec_ = TraceCodec::kZstd;
  TraceTotals totals_;
  std::vector<unsigned char> scratch_;
  std::unique_ptr<detail::BlockCodec> codec_state_;
};

/// Writes `groups` (any order; sorted by cg, which must be distinct) as one trace file through TraceWriter.
void write_trace(const std::filesystem::path& path, const nlohmann::json& header,
                 std::span<const TraceRecorder* const> groups, TraceCodec codec = TraceCodec::kZstd);

/// Reads a trace file one block at a time (memory bounded by the largest block). Every malformed input throws
/// TraceFormatError; sizes are checked against the file before anything is allocated.
class TraceReader {
 public:
  TraceReader();
  explicit TraceReader(const std::filesystem::path& path);
  ~TraceReader();
  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;

  /// Opens the file and reads magic, version and header. Throws std::runtime_error if it cannot be opened.
  void open(const std::filesystem::path& path);
  const nlohmann::json& header() const { return header_; }
  std::uint32_t version() const { return version_; }
  /// Reads the next DMA or markers block into `block` (reusing its storage). Returns false once the end
  /// block has been read and its totals checked against what was read.
  bool next(TraceBlock& block);
  /// When on, next() seeks past DMA payloads without decoding them: a DMA block comes back with an empty chunk
  /// (its events are still counted and checked against the end block). For a first pass that wants the markers.
  void skip_dma(bool skip) { skip_dma_ = skip; }
  /// Counts of what has been read so far (the file's totals once next() returned false).
  const TraceTotals& totals() const { return totals_; }
  /// Byte offset of the next block.
  std::uint64_t offset() const { return offset_; }
  std::uint64_t file_size() const { return size_; }

  /// Reads a whole file: one recorder per core group present, in cg order, events and markers in order.
  static std::vector<TraceRecorder> read_all(const std::filesystem::path& path);

 private:
  [[noreturn]] void error(std::uint64_t at, const std::string& problem, const std::string& detail = {}) const;
  void read_exact(void* data, std::size_t size);
  void read_payload(std::uint64_t payload);
  void read_dma(std::uint64_t at, std::uint64_t payload, std::uint32_t codec, std::uint32_t count, DmaChunk& chunk);
  void read_markers(std::uint64_t at, std::uint64_t payload, std::uint32_t count, std::vector<Marker>& out);
  void read_end(std::uint64_t at, std::uint64_t payload, std::uint32_t count);

  std::filesystem::path path_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;
  std::uint32_t version_ = 0;
  nlohmann::json header_;
  bool done_ = false;
  bool skip_dma_ = false;
  std::int64_t last_cg_ = -1;
  TraceTotals totals_;
  std::vector<unsigned char> scratch_;
  std::unique_ptr<detail::BlockCodec> codec_state_;
};

}  // namespace ldmsim
