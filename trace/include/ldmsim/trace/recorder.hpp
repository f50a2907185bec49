// Trace of one core group: DMA requests in compact columnar chunks (32 bytes per event) plus markers
// (launches, barriers, core exits, faults, lint warnings), in memory or spilled block by block to a temporary
// file. Single writer, no locks: each group's fibers run on one host thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/dma/event.hpp"
#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/types.hpp"
#include "ldmsim/trace/codec.hpp"

namespace ldmsim {

/// Non-DMA events.
enum class MarkerKind : std::uint8_t {
  kLaunchBegin = 0,  ///< text = kernel name; core = -1
  kLaunchEnd = 1,    ///< group finished the launch; cycle = group end cycle
  kCoreExit = 2,     ///< a core's kernel returned (or unwound)
  kBarrier = 3,      ///< barrier release; value = scope (0 group, 1 row, 2 col, 3 node: core -1); cycle = release cycle
  kFault = 4,        ///< text = fault message; value = FaultKind
  kLintWarning = 5,  ///< text = violation message
};

/// "launch begin", "launch end", "core exit", "barrier", "fault" or "lint warning".
std::string_view to_string(MarkerKind kind) noexcept;

struct Marker {
  MarkerKind kind = MarkerKind::kLaunchBegin;
  Cycle cycle = 0;
  std::int32_t core = -1;
  std::uint32_t value = 0;
  std::string text;

  friend bool operator==(const Marker&, const Marker&) = default;
};

/// A chunk of DMA events stored column by column. Packing: main48_core16 = main | core << 48;
/// ldm24_flags8 = ldm | op << 24 | mode << 25 | status << 27. Strided requests keep bsize and stride in a
/// side table indexed by position in the chunk. push() throws std::length_error for a value that does not
/// fit its packed field (main >= 2^48, ldm >= 2^24, start - issue or end - start outside [0, 2^32)).
struct DmaChunk {
  static constexpr std::size_t kCapacity = 4096;
  static constexpr std::uint64_t kMainLimit = std::uint64_t{1} << 48;  ///< main addresses must be below this
  static constexpr std::uint32_t kLdmLimit = std::uint32_t{1} << 24;   ///< ldm addresses must be below this
  static constexpr int kOpShift = 24;                                  ///< 1 bit
  static constexpr int kModeShift = 25;                                ///< 2 bits
  static constexpr int kStatusShift = 27;                              ///< 2 bits; bits 29..31 are zero

  std::vector<std::uint64_t> issue;
  std::vector<std::uint32_t> start_delta;  ///< start - issue
  std::vector<std::uint32_t> duration;     ///< end - start
  std::vector<std::uint64_t> main48_core16;
  std::vector<std::uint32_t> length;
  std::vector<std::uint32_t> ldm24_flags8;
  struct Strided {
    std::uint32_t index;
    std::uint32_t bsize;
    std::uint32_t stride;
    friend bool operator==(const Strided&, const Strided&) = default;
  };
  std::vector<Strided> strided;

  std::size_t size() const { return issue.size(); }
  bool full() const { return size() >= kCapacity; }
  void reserve(std::size_t n);
  void push(const DmaEvent& event);
  DmaEvent at(std::size_t i) const;
  /// Bytes of event data held (excluding vector slack).
  std::size_t payload_bytes() const;
  /// Empties every column, keeping their capacity (so the next events land in pages already touched).
  void clear();
};

/// A spill file could not be written or read back (a full disk, a directory removed): a failure of the host, not
/// of the simulated program, so a launch rethrows it from join() as it is rather than as a kernel's fault.
class TraceSpillError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
class TraceSpill;
}

/// The trace of one core group. By default everything stays in memory. After spill_to(dir), every chunk that
/// fills up and every 4096 markers are encoded as trace-file blocks and appended to an unlinked temporary file
/// in `dir`, so recording holds one open chunk in memory however long the run; readers below see spilled and
/// in-memory data alike, in record order.
class TraceRecorder final : public DmaEventSink {
 public:
  /// Markers kept in memory before a spilling recorder writes them out as one block.
  static constexpr std::size_t kSpillMarkers = 4096;

  TraceRecorder(int cg, bool enabled);
  ~TraceRecorder() override;
  TraceRecorder(TraceRecorder&&) noexcept;
  TraceRecorder& operator=(TraceRecorder&&) noexcept;

  bool enabled() const { return enabled_; }
  int cg() const { return cg_; }
  /// Spill to a temporary file in `directory` from now on, blocks encoded with `codec`. Raw (the default) keeps
  /// recording cheap, a copy into the page cache per chunk; zstd there costs 40-120 ns per event on the recording
  /// thread, so a Machine spills raw and compresses when it writes the trace file. Throws std::logic_error if
  /// anything was recorded already, std::invalid_argument if `directory` is not a directory.
  void spill_to(const std::filesystem::path& directory, TraceCodec codec = TraceCodec::kRaw);
  bool spilling() const { return spill_ != nullptr; }

  /// Appends a DMA event (no-op when disabled); throws std::length_error if it does not fit the packing, and
  /// std::runtime_error if a spill write fails.
  void record(const DmaEvent& event) override;
  /// Appends a marker (no-op when disabled).
  void mark(Marker marker);
  /// Appends a whole chunk of events after the recorded ones (used by trace readers; works when disabled).
  void append_chunk(DmaChunk chunk);

  std::uint64_t dma_count() const;
  std::uint64_t marker_count() const;
  /// Every DMA chunk in record order (spilled ones are read back and decoded one at a time).
  void for_each_chunk(const std::function<void(const DmaChunk&)>& f) const;
  /// Calls f(const DmaEvent&) for every DMA event in record order.
  template <typename F>
  void for_each_dma(F&& f) const {
    for_each_chunk([&](const DmaChunk& chunk) {
      for (std::size_t i = 0; i < chunk.size(); ++i) f(chunk.at(i));
    });
  }
  /// Every marker in record order (a copy, spilled ones included).
  std::vector<Marker> markers() const;

  /// For trace writers: the spilled blocks, each as encoded bytes (block header + payload), in order.
  void for_each_spilled_block(const std::function<void(std::span<const unsigned char>)>& f) const;
  /// For trace writers: the chunks and markers still in memory (recorded after the spilled blocks).
  const std::vector<DmaChunk>& memory_chunks() const { return chunks_; }
  const std::vector<Marker>& memory_markers() const { return markers_; }

  /// Host bytes used: chunk column capacities, markers, and the spill's index and buffers.
  std::size_t memory_bytes() const;
  /// Bytes written to the spill file so far (0 when not spilling).
  std::uint64_t spilled_bytes() const;
  /// Drops every event and marker and releases their memory (a spill file starts over).
  void clear();

 private:
  int cg_;
  bool enabled_;
  std::vector<DmaChunk> chunks_;  // when spilling: at most the one open chunk, recycled after each spill
  std::vector<Marker> markers_;
  std::unique_ptr<detail::TraceSpill> spill_;
  std::filesystem::path spill_directory_;
  TraceCodec spill_codec_ = TraceCodec::kRaw;
};

}  // namespace ldmsim
