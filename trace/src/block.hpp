// Byte encoding of trace blocks (header, DMA payloads in every codec, markers), shared by the trace file writer
// and reader and by the recorder's spill file, so a spilled block can be copied into a trace file unchanged.
// Layout: docs/trace-format.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ldmsim/trace/codec.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace ldmsim::detail {

inline constexpr std::size_t kBlockHeaderBytes = 24;  // type, cg, codec, payload bytes, count
inline constexpr std::size_t kEventBytes = 32;        // one DMA event across the six columns
inline constexpr std::size_t kStridedBytes = 12;      // index, bsize, stride
inline constexpr std::size_t kMarkerFixedBytes = 21;  // kind u8, cycle u64, core i32, value u32, text length u32
inline constexpr std::size_t kZstdSizeBytes = 8;      // u64 decoded size before a zstd frame
/// Block type values on disk (TraceBlockKind).
inline constexpr std::uint32_t kDmaBlock = 1;
inline constexpr std::uint32_t kMarkersBlock = 2;
inline constexpr std::uint32_t kEndBlock = 3;

template <typename T>
void put_le(unsigned char* p, T value) {
  using U = std::make_unsigned_t<T>;
  const auto v = static_cast<U>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

template <typename T>
T get_le(const unsigned char* p) {
  using U = std::make_unsigned_t<T>;
  U v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<U>(v | static_cast<U>(static_cast<U>(p[i]) << (8 * i)));
  return static_cast<T>(v);
}

struct BlockHeader {
  std::uint32_t type = 0;
  std::uint32_t cg = 0;
  std::uint32_t codec = 0;
  std::uint64_t payload = 0;
  std::uint32_t count = 0;
};

void put_block_header(unsigned char* p, const BlockHeader& h);
BlockHeader get_block_header(const unsigned char* p);

/// A malformed payload: `offset` counts from the start of the payload, or is kWholeBlock when the problem is
/// the block as a whole (sizes and counts that disagree, a damaged compressed frame).
struct BlockDecodeError : std::runtime_error {
  static constexpr std::uint64_t kWholeBlock = ~std::uint64_t{0};
  BlockDecodeError(std::uint64_t at, std::string what_problem, std::string what_detail)
      : std::runtime_error(what_problem + " (" + what_detail + ")"),
        offset(at),
        problem(std::move(what_problem)),
        detail(std::move(what_detail)) {}
  std::uint64_t offset;
  std::string problem;
  std::string detail;
};

/// Reusable encoder state: zstd contexts and scratch buffers (allocated on first use). Not thread-safe; use one
/// per writer or recorder.
class BlockCodec {
 public:
  BlockCodec() = default;
  ~BlockCodec();
  BlockCodec(const BlockCodec&) = delete;
  BlockCodec& operator=(const BlockCodec&) = delete;

  /// Appends one DMA block (header + payload) holding events [begin, end) of `chunk` to `out`.
  void append_dma(std::vector<unsigned char>& out, std::uint32_t cg, const DmaChunk& chunk, std::size_t begin,
                  std::size_t end, TraceCodec codec);
  /// Decodes a DMA payload of `count` events; throws BlockDecodeError on any inconsistency.
  void decode_dma(std::span<const unsigned char> payload, std::uint32_t codec, std::uint32_t count, DmaChunk& chunk);
  /// Host bytes held by the contexts and buffers.
  std::size_t memory_bytes() const;

 private:
  void* cctx_ = nullptr;  // ZSTD_CCtx
  void* dctx_ = nullptr;  // ZSTD_DCtx
  std::vector<unsigned char> raw_;
};

/// Bytes of a raw DMA payload holding n events and `strided` side-table entries.
inline std::uint64_t raw_dma_payload_bytes(std::size_t n, std::size_t strided) {
  return std::uint64_t{n} * kEventBytes + 4 + std::uint64_t{strided} * kStridedBytes;
}

/// The six column arrays of events [begin, begin + n) as bytes, in the raw payload's order. On a little-endian host
/// these are exactly the payload's column bytes (the one place that order is written down for encoders).
std::array<std::span<const unsigned char>, 6> raw_columns(const DmaChunk& chunk, std::size_t begin, std::size_t n);

/// Largest payload a DMA block of `count` events can have in `codec` (larger ones are corrupt).
std::uint64_t max_dma_payload(std::uint32_t codec, std::uint32_t count);

/// Appends one markers block (header + raw payload) to `out`.
void append_markers_block(std::vector<unsigned char>& out, std::uint32_t cg, std::span<const Marker> markers);
/// Decodes a markers payload of `count` markers into `out`; throws BlockDecodeError.
void decode_markers(std::span<const unsigned char> payload, std::uint32_t count, std::vector<Marker>& out);

/// Number of strided entries of `chunk` whose index lies in [begin, end), and the first of them.
std::pair<std::size_t, std::size_t> strided_range(const DmaChunk& chunk, std::size_t begin, std::size_t end);

}  // namespace ldmsim::detail
