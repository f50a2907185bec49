// Trace block encoding. The zstd codec delta-codes the two u64 columns (issue cycles rise, addresses of
// consecutive requests are close), which lets zstd's fastest level reach a few bytes per event.
#include "block.hpp"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

#include "ldmsim/sim/enum_names.hpp"

namespace ldmsim {

constexpr auto kTraceCodecNames = enum_names<TraceCodec>({
    {TraceCodec::kRaw, "raw"},
    {TraceCodec::kZstd, "zstd"},
});

std::string_view to_string(TraceCodec codec) {
  return kTraceCodecNames.name(codec);
}

std::optional<TraceCodec> parse_trace_codec(std::string_view name) {
  return kTraceCodecNames.parse(name);
}

namespace detail {
namespace {

constexpr bool kLittle = std::endian::native == std::endian::little;
constexpr int kZstdLevel = 1;  // fastest standard level: compression runs on the recording thread

static_assert(sizeof(DmaChunk::Strided) == kStridedBytes && std::is_trivially_copyable_v<DmaChunk::Strided>);

[[noreturn]] void bad(std::uint64_t offset, std::string problem, std::string detail = {}) {
  throw BlockDecodeError(offset, std::move(problem), std::move(detail));
}

template <typename T>
std::span<const unsigned char> column_bytes(const std::vector<T>& column, std::size_t begin, std::size_t n) {
  return {reinterpret_cast<const unsigned char*>(column.data() + begin), n * sizeof(T)};
}

template <typename T>
void get_column(const unsigned char*& p, std::vector<T>& column, std::size_t n) {
  column.clear();
  column.resize(n);
  if constexpr (kLittle) {
    if (n != 0) std::memcpy(column.data(), p, n * sizeof(T));
  } else {
    for (std::size_t i = 0; i < n; ++i) column[i] = get_le<T>(p + i * sizeof(T));
  }
  p += n * sizeof(T);
}

/// Writes the raw payload of events [begin, end) at p (raw_dma_payload_bytes() bytes).
void put_raw(unsigned char* p, const DmaChunk& chunk, std::size_t begin, std::size_t end) {
  const std::size_t n = end - begin;
  if constexpr (kLittle) {
    for (const auto column : raw_columns(chunk, begin, n)) {
      if (!column.empty()) std::memcpy(p, column.data(), column.size());
      p += column.size();
    }
  } else {
    const auto put = [&](const auto& column) {
      for (std::size_t i = 0; i < n; ++i, p += sizeof(column[0])) put_le(p, column[begin + i]);
    };
    put(chunk.issue);
    put(chunk.start_delta);
    put(chunk.duration);
    put(chunk.main48_core16);
    put(chunk.length);
    put(chunk.ldm24_flags8);
  }
  const auto [first, count] = strided_range(chunk, begin, end);
  put_le(p, static_cast<std::uint32_t>(count));
  p += 4;
  for (std::size_t i = first; i < first + count; ++i, p += kStridedBytes) {
    const auto& s = chunk.strided[i];
    put_le(p, static_cast<std::uint32_t>(s.index - begin));
    put_le(p + 4, s.bsize);
    put_le(p + 8, s.stride);
  }
}

/// Replaces the u64 values at p[0..n) by their differences (first from 0), or undoes that; wrapping arithmetic.
void delta_encode_u64(unsigned char* p, std::size_t n) {
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = get_le<std::uint64_t>(p + 8 * i);
    put_le(p + 8 * i, v - previous);
    previous = v;
  }
}

void delta_decode_u64(unsigned char* p, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += get_le<std::uint64_t>(p + 8 * i);
    put_le(p + 8 * i, sum);
  }
}

void decode_raw(std::span<const unsigned char> payload, std::uint32_t count, DmaChunk& chunk) {
  const std::size_t n = count;
  const std::uint64_t fixed = std::uint64_t{count} * kEventBytes + 4;
  if (payload.size() < fixed) {
    bad(BlockDecodeError::kWholeBlock, "corrupt DMA block",
        std::to_string(payload.size()) + " payload bytes cannot hold " + std::to_string(count) + " events");
  }
  const unsigned char* p = payload.data();
  get_column(p, chunk.issue, n);
  get_column(p, chunk.start_delta, n);
  get_column(p, chunk.duration, n);
  get_column(p, chunk.main48_core16, n);
  get_column(p, chunk.length, n);
  get_column(p, chunk.ldm24_flags8, n);
  const auto strided_count = get_le<std::uint32_t>(p);
  p += 4;
  if (strided_count > count || payload.size() != fixed + std::uint64_t{strided_count} * kStridedBytes) {
    bad(BlockDecodeError::kWholeBlock, "corrupt DMA block",
        "strided table of " + std::to_string(strided_count) + " entries does not match " + std::to_string(count) +
            " events in " + std::to_string(payload.size()) + " payload bytes");
  }
  chunk.strided.resize(strided_count);
  for (std::size_t i = 0; i < strided_count; ++i, p += kStridedBytes) {
    auto& s = chunk.strided[i];
    s.index = get_le<std::uint32_t>(p);
    s.bsize = get_le<std::uint32_t>(p + 4);
    s.stride = get_le<std::uint32_t>(p + 8);
    if (s.index >= count || (i > 0 && s.index <= chunk.strided[i - 1].index)) {
      bad(static_cast<std::uint64_t>(p - payload.data()), "corrupt DMA block",
          "strided entry " + std::to_string(i) + " has bad index " + std::to_string(s.index));
    }
  }
  // issue + start_delta + duration must not wrap: readers compute end cycles from them, and writers re-pack them.
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t after_issue = std::uint64_t{chunk.start_delta[i]} + chunk.duration[i];
    if (chunk.issue[i] > std::numeric_limits<std::uint64_t>::max() - after_issue) {
      bad(BlockDecodeError::kWholeBlock, "corrupt DMA block",
          "event " + std::to_string(i) + " ends after cycle 2^64 - 1 (issue " + std::to_string(chunk.issue[i]) + " + " +
              std::to_string(after_issue) + ")");
    }
  }
  // Flags must name known op/mode/status values, and the spare bits must be zero.
  constexpr std::uint32_t kMode = static_cast<std::uint32_t>(DmaMode::kRow);
  constexpr std::uint32_t kStatus = static_cast<std::uint32_t>(DmaStatus::kLintWarning);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t lf = chunk.ldm24_flags8[i];
    if ((lf >> 29) != 0 || ((lf >> DmaChunk::kModeShift) & 3u) > kMode ||
        ((lf >> DmaChunk::kStatusShift) & 3u) > kStatus) {
      bad(28 * n + 4 * i, "corrupt DMA block", "event " + std::to_string(i) + " has invalid flags");
    }
  }
}

}  // namespace

void put_block_header(unsigned char* p, const BlockHeader& h) {
  put_le(p, h.type);
  put_le(p + 4, h.cg);
  put_le(p + 8, h.codec);
  put_le(p + 12, h.payload);
  put_le(p + 20, h.count);
}

BlockHeader get_block_header(const unsigned char* p) {
  return {get_le<std::uint32_t>(p), get_le<std::uint32_t>(p + 4), get_le<std::uint32_t>(p + 8),
          get_le<std::uint64_t>(p + 12), get_le<std::uint32_t>(p + 20)};
}

std::array<std::span<const unsigned char>, 6> raw_columns(const DmaChunk& chunk, std::size_t begin, std::size_t n) {
  return {column_bytes(chunk.issue, begin, n),    column_bytes(chunk.start_delta, begin, n),
          column_bytes(chunk.duration, begin, n), column_bytes(chunk.main48_core16, begin, n),
          column_bytes(chunk.length, begin, n),   column_bytes(chunk.ldm24_flags8, begin, n)};
}

std::pair<std::size_t, std::size_t> strided_range(const DmaChunk& chunk, std::size_t begin, std::size_t end) {
  const auto by_index = [](const DmaChunk::Strided& s, std::size_t index) { return s.index < index; };
  const auto lo = std::lower_bound(chunk.strided.begin(), chunk.strided.end(), begin, by_index);
  const auto hi = std::lower_bound(lo, chunk.strided.end(), end, by_index);
  return {static_cast<std::size_t>(lo - chunk.strided.begin()), static_cast<std::size_t>(hi - lo)};
}

BlockCodec::~BlockCodec() {
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_));
}

std::size_t BlockCodec::memory_bytes() const {
  return raw_.capacity() + ZSTD_sizeof_CCtx(static_cast<const ZSTD_CCtx*>(cctx_)) +
         ZSTD_sizeof_DCtx(static_cast<const ZSTD_DCtx*>(dctx_));
}

void BlockCodec::append_dma(std::vector<unsigned char>& out, std::uint32_t cg, const DmaChunk& chunk, std::size_t begin,
                            std::size_t end, TraceCodec codec) {
  const std::size_t n = end - begin;
  const std::size_t raw = static_cast<std::size_t>(raw_dma_payload_bytes(n, strided_range(chunk, begin, end).second));
  const std::size_t at = out.size();
  if (codec == TraceCodec::kRaw) {
    out.resize(at + kBlockHeaderBytes + raw);
    put_raw(out.data() + at + kBlockHeaderBytes, chunk, begin, end);
    put_block_header(out.data() + at,
                     {kDmaBlock, cg, static_cast<std::uint32_t>(codec), raw, static_cast<std::uint32_t>(n)});
    return;
  }
  raw_.resize(raw);
  put_raw(raw_.data(), chunk, begin, end);
  delta_encode_u64(raw_.data(), n);           // issue
  delta_encode_u64(raw_.data() + 16 * n, n);  // main48_core16
  if (cctx_ == nullptr) {
    auto* cctx = ZSTD_createCCtx();
    if (cctx == nullptr) throw std::bad_alloc();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kZstdLevel);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);  // a damaged block is reported, not misread
    cctx_ = cctx;
  }
  const std::size_t bound = ZSTD_compressBound(raw);
  out.resize(at + kBlockHeaderBytes + kZstdSizeBytes + bound);
  unsigned char* frame = out.data() + at + kBlockHeaderBytes + kZstdSizeBytes;
  const std::size_t packed = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), frame, bound, raw_.data(), raw);
  if (ZSTD_isError(packed)) {
    throw std::runtime_error(std::string("trace: zstd compression failed: ") + ZSTD_getErrorName(packed));
  }
  out.resize(at + kBlockHeaderBytes + kZstdSizeBytes + packed);
  put_le(out.data() + at + kBlockHeaderBytes, static_cast<std::uint64_t>(raw));
  put_block_header(out.data() + at, {kDmaBlock, cg, static_cast<std::uint32_t>(codec), kZstdSizeBytes + packed,
                                     static_cast<std::uint32_t>(n)});
}

void BlockCodec::decode_dma(std::span<const unsigned char> payload, std::uint32_t codec, std::uint32_t count,
                            DmaChunk& chunk) {
  if (codec == static_cast<std::uint32_t>(TraceCodec::kRaw)) {
    decode_raw(payload, count, chunk);
    return;
  }
  if (codec != static_cast<std::uint32_t>(TraceCodec::kZstd)) {
    bad(BlockDecodeError::kWholeBlock, "unsupported codec " + std::to_string(codec),
        "this build reads raw (0) and zstd (1)");
  }
  if (payload.size() < kZstdSizeBytes) {
    bad(BlockDecodeError::kWholeBlock, "corrupt compressed DMA block",
        std::to_string(payload.size()) + " payload bytes hold no decoded size");
  }
  // The decoded size is bounded by the event count before anything is allocated.
  const auto size = get_le<std::uint64_t>(payload.data());
  const std::uint64_t least = std::uint64_t{count} * kEventBytes + 4;
  const std::uint64_t most = least + std::uint64_t{count} * kStridedBytes;
  if (size < least || size > most) {
    bad(BlockDecodeError::kWholeBlock, "corrupt compressed DMA block",
        "decoded size " + std::to_string(size) + " is impossible for " + std::to_string(count) + " events");
  }
  const auto frame = payload.subspan(kZstdSizeBytes);
  const unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (declared != size) {
    bad(BlockDecodeError::kWholeBlock, "corrupt compressed DMA block",
        "the zstd frame does not declare the block's decoded size");
  }
  if (dctx_ == nullptr) {
    dctx_ = ZSTD_createDCtx();
    if (dctx_ == nullptr) throw std::bad_alloc();
  }
  raw_.resize(static_cast<std::size_t>(size));
  const std::size_t got =
      ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), raw_.data(), raw_.size(), frame.data(), frame.size());
  if (ZSTD_isError(got)) {
    bad(BlockDecodeError::kWholeBlock, "corrupt compressed DMA block", std::string("zstd: ") + ZSTD_getErrorName(got));
  }
  if (got != size) {
    bad(BlockDecodeError::kWholeBlock, "corrupt compressed DMA block",
        "decoded " + std::to_string(got) + " bytes, the block says " + std::to_string(size));
  }
  delta_decode_u64(raw_.data(), count);
  delta_decode_u64(raw_.data() + 16 * std::size_t{count}, count);
  try {
    decode_raw(raw_, count, chunk);
  } catch (const BlockDecodeError& e) {
    // Offsets inside the decoded bytes mean nothing in the file: report the block.
    bad(BlockDecodeError::kWholeBlock, e.problem, e.detail + ", after decompression");
  }
}

std::uint64_t max_dma_payload(std::uint32_t codec, std::uint32_t count) {
  const std::uint64_t raw = std::uint64_t{count} * (kEventBytes + kStridedBytes) + 4;
  if (codec == static_cast<std::uint32_t>(TraceCodec::kRaw)) return raw;
  return kZstdSizeBytes + ZSTD_compressBound(static_cast<std::size_t>(raw));
}

void append_markers_block(std::vector<unsigned char>& out, std::uint32_t cg, std::span<const Marker> markers) {
  std::size_t payload = 0;
  for (const auto& m : markers) {
    if (m.text.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("trace: marker text of " + std::to_string(m.text.size()) + " bytes exceeds 4 GiB");
    }
    payload += kMarkerFixedBytes + m.text.size();
  }
  const std::size_t at = out.size();
  out.resize(at + kBlockHeaderBytes + payload);
  put_block_header(out.data() + at, {kMarkersBlock, cg, static_cast<std::uint32_t>(TraceCodec::kRaw), payload,
                                     static_cast<std::uint32_t>(markers.size())});
  unsigned char* p = out.data() + at + kBlockHeaderBytes;
  for (const auto& m : markers) {
    p[0] = static_cast<unsigned char>(m.kind);
    put_le(p + 1, m.cycle);
    put_le(p + 9, m.core);
    put_le(p + 13, m.value);
    put_le(p + 17, static_cast<std::uint32_t>(m.text.size()));
    if (!m.text.empty()) std::memcpy(p + kMarkerFixedBytes, m.text.data(), m.text.size());
    p += kMarkerFixedBytes + m.text.size();
  }
}

void decode_markers(std::span<const unsigned char> payload, std::uint32_t count, std::vector<Marker>& out) {
  if (payload.size() < std::uint64_t{count} * kMarkerFixedBytes) {
    bad(BlockDecodeError::kWholeBlock, "corrupt markers block",
        std::to_string(payload.size()) + " payload bytes cannot hold " + std::to_string(count) + " markers");
  }
  out.clear();
  out.reserve(count);
  std::size_t pos = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const unsigned char* p = payload.data() + pos;
    const std::size_t left = payload.size() - pos;
    if (left < kMarkerFixedBytes) {
      bad(pos, "truncated marker", "expected 21 bytes, " + std::to_string(left) + " left in its block");
    }
    if (p[0] > static_cast<unsigned char>(MarkerKind::kLintWarning)) {
      bad(pos, "corrupt marker", "unknown kind " + std::to_string(p[0]));
    }
    Marker m;
    m.kind = static_cast<MarkerKind>(p[0]);
    m.cycle = get_le<std::uint64_t>(p + 1);
    m.core = get_le<std::int32_t>(p + 9);
    m.value = get_le<std::uint32_t>(p + 13);
    const auto text_bytes = get_le<std::uint32_t>(p + 17);
    if (text_bytes > left - kMarkerFixedBytes) {
      bad(pos, "truncated marker",
          "expected " + std::to_string(text_bytes) + " text bytes, " + std::to_string(left - kMarkerFixedBytes) +
              " left in its block");
    }
    m.text.assign(reinterpret_cast<const char*>(p + kMarkerFixedBytes), text_bytes);
    out.push_back(std::move(m));
    pos += kMarkerFixedBytes + text_bytes;
  }
  if (pos != payload.size()) {
    bad(pos, "corrupt markers block", std::to_string(payload.size() - pos) + " unexplained trailing bytes");
  }
}

}  // namespace detail
}  // namespace ldmsim
