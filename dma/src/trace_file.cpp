// Trace file writer and reader. DMA columns go to and from the file with one write/read per column (raw
// little-endian, byte-swapped only on big-endian hosts); every size read from the file is checked against the
// bytes that remain before anything is allocated.
#include "ldmsim/dma/trace_file.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>
#include <type_traits>
#include <utility>

namespace ldmsim {
namespace {

constexpr std::size_t kFileHeaderBytes = 16;   // magic, version, header length
constexpr std::size_t kBlockHeaderBytes = 24;  // type, cg, codec, payload bytes, count
constexpr std::size_t kEventBytes = 32;        // one DMA event across the six columns
constexpr std::size_t kStridedBytes = 12;      // index, bsize, stride
constexpr std::size_t kMarkerFixedBytes = 21;  // kind u8, cycle u64, core i32, value u32, text length u32
constexpr std::size_t kEndPayloadBytes = 32;   // four u64 totals
constexpr bool kLittle = std::endian::native == std::endian::little;

static_assert(sizeof(DmaChunk::Strided) == kStridedBytes && std::is_trivially_copyable_v<DmaChunk::Strided>);
static_assert(kTraceMagic.size() == 8);

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

std::string errno_text() {
  const int e = errno;
  return e != 0 ? ": " + std::generic_category().message(e) : std::string();
}

std::string quoted(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

}  // namespace

TraceFormatError::TraceFormatError(const std::filesystem::path& file, std::uint64_t offset, const std::string& problem,
                                   const std::string& detail)
    : std::runtime_error(file.string() + ": " + problem + " at byte " + std::to_string(offset) +
                         (detail.empty() ? std::string() : " (" + detail + ")")),
      file_(file),
      offset_(offset) {}

// ---------------------------------------------------------------------------------------------------- writer

TraceWriter::~TraceWriter() {
  if (!open_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void TraceWriter::open(const std::filesystem::path& path, const nlohmann::json& header) {
  if (open_) throw std::logic_error("TraceWriter::open: " + quoted(path_) + " is still open");
  if (!header.is_object()) throw std::invalid_argument("TraceWriter::open: the trace header must be a JSON object");
  const std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("TraceWriter::open: trace header of " + std::to_string(text.size()) +
                            " bytes exceeds 4 GiB");
  }
  path_ = path;
  tmp_ = path;
  tmp_ += ".tmp";
  totals_ = {};
  last_cg_ = -1;
  out_.clear();
  errno = 0;
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw std::runtime_error("cannot create trace file " + quoted(tmp_) + " (for " + quoted(path_) + ")" +
                             errno_text());
  }
  open_ = true;
  std::array<unsigned char, kFileHeaderBytes> head{};
  std::memcpy(head.data(), kTraceMagic.data(), kTraceMagic.size());
  put_le(head.data() + 8, kTraceFormatVersion);
  put_le(head.data() + 12, static_cast<std::uint32_t>(text.size()));
  write_bytes(head.data(), head.size());
  write_bytes(text.data(), text.size());
}

void TraceWriter::fail(const std::string& what) {
  throw std::runtime_error("trace file " + quoted(path_) + ": " + what + errno_text());
}

void TraceWriter::write_bytes(const void* data, std::size_t size) {
  if (size == 0) return;
  errno = 0;
  out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out_) fail("write to " + quoted(tmp_) + " failed");
}

void TraceWriter::check_cg(int cg, bool new_group) {
  if (!open_) throw std::logic_error("TraceWriter: write before open() or after finish()");
  if (cg < 0) throw std::invalid_argument("TraceWriter: core group " + std::to_string(cg) + " is negative");
  if (cg < last_cg_ || (new_group && cg == last_cg_)) {
    throw std::invalid_argument("TraceWriter: core group " + std::to_string(cg) + " written after core group " +
                                std::to_string(last_cg_) + "; groups must be written once each, in cg order");
  }
  if (cg != last_cg_) {
    ++totals_.groups;
    last_cg_ = cg;
  }
}

void TraceWriter::write_block_header(TraceBlockKind kind, std::uint32_t cg, std::uint64_t payload,
                                     std::uint32_t count) {
  std::array<unsigned char, kBlockHeaderBytes> h{};
  put_le(h.data(), static_cast<std::uint32_t>(kind));
  put_le(h.data() + 4, cg);
  put_le(h.data() + 8, static_cast<std::uint32_t>(TraceCodec::kRaw));
  put_le(h.data() + 12, payload);
  put_le(h.data() + 20, count);
  write_bytes(h.data(), h.size());
  if (kind != TraceBlockKind::kEnd) ++totals_.blocks;
}

namespace {

template <typename T>
void encode_column(const std::vector<T>& column, std::size_t begin, std::size_t n, std::vector<unsigned char>& out) {
  out.resize(n * sizeof(T));
  for (std::size_t i = 0; i < n; ++i) put_le(out.data() + i * sizeof(T), column[begin + i]);
}

}  // namespace

void TraceWriter::write_dma_range(std::uint32_t cg, const DmaChunk& chunk, std::size_t begin, std::size_t end) {
  const std::size_t n = end - begin;
  const auto by_index = [](const DmaChunk::Strided& s, std::size_t index) { return s.index < index; };
  const auto lo = std::lower_bound(chunk.strided.begin(), chunk.strided.end(), begin, by_index);
  const auto hi = std::lower_bound(lo, chunk.strided.end(), end, by_index);
  const auto strided_count = static_cast<std::size_t>(hi - lo);
  write_block_header(TraceBlockKind::kDma, cg, n * kEventBytes + 4 + strided_count * kStridedBytes,
                     static_cast<std::uint32_t>(n));

  const auto column = [&](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    if constexpr (kLittle) {
      write_bytes(v.data() + begin, n * sizeof(T));
    } else {
      encode_column(v, begin, n, scratch_);
      write_bytes(scratch_.data(), scratch_.size());
    }
  };
  column(chunk.issue);
  column(chunk.start_delta);
  column(chunk.duration);
  column(chunk.main48_core16);
  column(chunk.length);
  column(chunk.ldm24_flags8);

  std::array<unsigned char, 4> count{};
  put_le(count.data(), static_cast<std::uint32_t>(strided_count));
  write_bytes(count.data(), count.size());
  if (kLittle && begin == 0) {
    write_bytes(chunk.strided.data() + (lo - chunk.strided.begin()), strided_count * kStridedBytes);
  } else {
    scratch_.resize(strided_count * kStridedBytes);
    unsigned char* p = scratch_.data();
    for (auto it = lo; it != hi; ++it, p += kStridedBytes) {
      put_le(p, static_cast<std::uint32_t>(it->index - begin));
      put_le(p + 4, it->bsize);
      put_le(p + 8, it->stride);
    }
    write_bytes(scratch_.data(), scratch_.size());
  }
  totals_.dma_events += n;
}

void TraceWriter::write_dma(int cg, const DmaChunk& chunk) {
  check_cg(cg, false);
  const std::size_t n = chunk.size();
  if (chunk.start_delta.size() != n || chunk.duration.size() != n || chunk.main48_core16.size() != n ||
      chunk.length.size() != n || chunk.ldm24_flags8.size() != n ||
      (!chunk.strided.empty() && chunk.strided.back().index >= n)) {
    throw std::invalid_argument("TraceWriter::write_dma: chunk columns of core group " + std::to_string(cg) +
                                " have inconsistent sizes");
  }
  for (std::size_t begin = 0; begin < n; begin += kTraceMaxBlockEvents) {
    write_dma_range(static_cast<std::uint32_t>(cg), chunk, begin,
                    std::min<std::size_t>(n, begin + kTraceMaxBlockEvents));
  }
}

void TraceWriter::write_markers_block(std::uint32_t cg, std::span<const Marker> markers) {
  std::size_t payload = 0;
  for (const auto& m : markers) {
    if (m.text.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("TraceWriter: marker text of " + std::to_string(m.text.size()) + " bytes exceeds 4 GiB");
    }
    payload += kMarkerFixedBytes + m.text.size();
  }
  scratch_.resize(payload);
  unsigned char* p = scratch_.data();
  for (const auto& m : markers) {
    p[0] = static_cast<unsigned char>(m.kind);
    put_le(p + 1, m.cycle);
    put_le(p + 9, m.core);
    put_le(p + 13, m.value);
    put_le(p + 17, static_cast<std::uint32_t>(m.text.size()));
    if (!m.text.empty()) std::memcpy(p + kMarkerFixedBytes, m.text.data(), m.text.size());
    p += kMarkerFixedBytes + m.text.size();
  }
  write_block_header(TraceBlockKind::kMarkers, cg, payload, static_cast<std::uint32_t>(markers.size()));
  write_bytes(scratch_.data(), scratch_.size());
  totals_.markers += markers.size();
}

void TraceWriter::write_markers(int cg, std::span<const Marker> markers) {
  check_cg(cg, false);
  std::size_t begin = 0;
  do {
    const std::size_t n = std::min<std::size_t>(markers.size() - begin, kTraceMaxBlockMarkers);
    write_markers_block(static_cast<std::uint32_t>(cg), markers.subspan(begin, n));
    begin += n;
  } while (begin < markers.size());
}

void TraceWriter::write_group(const TraceRecorder& group) {
  check_cg(group.cg(), true);
  for (const auto& chunk : group.chunks()) write_dma(group.cg(), chunk);
  write_markers(group.cg(), group.markers());
}

void TraceWriter::finish() {
  if (!open_) throw std::logic_error("TraceWriter::finish: no trace file is open");
  write_block_header(TraceBlockKind::kEnd, 0, kEndPayloadBytes, 0);
  std::array<unsigned char, kEndPayloadBytes> end{};
  put_le(end.data(), totals_.dma_events);
  put_le(end.data() + 8, totals_.markers);
  put_le(end.data() + 16, totals_.blocks);
  put_le(end.data() + 24, totals_.groups);
  write_bytes(end.data(), end.size());
  errno = 0;
  out_.close();
  if (!out_) fail("closing " + quoted(tmp_) + " failed");
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) fail("cannot rename " + quoted(tmp_) + " to it: " + ec.message());
  open_ = false;
}

void write_trace(const std::filesystem::path& path, const nlohmann::json& header,
                 std::span<const TraceRecorder* const> groups) {
  std::vector<const TraceRecorder*> sorted(groups.begin(), groups.end());
  if (std::find(sorted.begin(), sorted.end(), nullptr) != sorted.end()) {
    throw std::invalid_argument("write_trace: null core-group recorder");
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->cg() < b->cg(); });
  TraceWriter writer(path, header);
  for (const auto* group : sorted) writer.write_group(*group);
  writer.finish();
}

// ---------------------------------------------------------------------------------------------------- reader

void TraceReader::error(std::uint64_t at, const std::string& problem, const std::string& detail) const {
  throw TraceFormatError(path_, at, problem, detail);
}

void TraceReader::read_exact(void* data, std::size_t size) {
  if (size == 0) return;
  in_.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
  if (!in_) error(offset_, "unexpected end of file", "the file changed while it was read?");
  offset_ += size;
}

void TraceReader::open(const std::filesystem::path& path) {
  path_ = path;
  in_.close();
  in_.clear();
  size_ = offset_ = 0;
  version_ = 0;
  header_ = nlohmann::json();
  done_ = false;
  last_cg_ = -1;
  totals_ = {};
  errno = 0;
  in_.open(path, std::ios::binary);
  if (!in_) throw std::runtime_error("cannot open trace file " + quoted(path) + errno_text());
  in_.seekg(0, std::ios::end);
  const auto end = in_.tellg();
  in_.seekg(0, std::ios::beg);
  if (!in_ || end < 0) throw std::runtime_error("cannot read trace file " + quoted(path));
  size_ = static_cast<std::uint64_t>(end);

  std::array<unsigned char, kFileHeaderBytes> head{};
  const auto have = static_cast<std::size_t>(std::min<std::uint64_t>(size_, head.size()));
  read_exact(head.data(), have);
  if (std::memcmp(head.data(), kTraceMagic.data(), std::min(have, kTraceMagic.size())) != 0) {
    error(0, "not an ldmsim trace file (bad magic)");
  }
  if (have < head.size()) {
    error(0, "truncated file header", "expected 16 bytes, " + std::to_string(have) + " left");
  }
  version_ = get_le<std::uint32_t>(head.data() + 8);
  if (version_ != kTraceFormatVersion) {
    error(8, "unsupported trace format version " + std::to_string(version_),
          "this build reads version " + std::to_string(kTraceFormatVersion));
  }
  const std::uint32_t header_bytes = get_le<std::uint32_t>(head.data() + 12);
  if (header_bytes > size_ - offset_) {
    error(offset_, "truncated header",
          "expected " + std::to_string(header_bytes) + " bytes, " + std::to_string(size_ - offset_) + " left");
  }
  std::string text(header_bytes, '\0');
  const std::uint64_t at = offset_;
  read_exact(text.data(), text.size());
  try {
    header_ = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    error(at, "invalid header JSON", e.what());
  }
  if (!header_.is_object()) error(at, "invalid header JSON", "not an object");
}

bool TraceReader::next(TraceBlock& block) {
  if (!in_.is_open()) throw std::logic_error("TraceReader::next: no trace file is open");
  if (done_) return false;
  const std::uint64_t at = offset_;
  const std::uint64_t left = size_ - offset_;
  if (left == 0) {
    error(at, "truncated file: no end block", "file ends after " + std::to_string(totals_.blocks) + " blocks");
  }
  if (left < kBlockHeaderBytes) {
    error(at, "truncated block header", "expected 24 bytes, " + std::to_string(left) + " left");
  }
  std::array<unsigned char, kBlockHeaderBytes> h{};
  read_exact(h.data(), h.size());
  const auto type = get_le<std::uint32_t>(h.data());
  const auto cg = get_le<std::uint32_t>(h.data() + 4);
  const auto codec = get_le<std::uint32_t>(h.data() + 8);
  const auto payload = get_le<std::uint64_t>(h.data() + 12);
  const auto count = get_le<std::uint32_t>(h.data() + 20);
  if (type < static_cast<std::uint32_t>(TraceBlockKind::kDma) ||
      type > static_cast<std::uint32_t>(TraceBlockKind::kEnd)) {
    error(at, "unknown block type " + std::to_string(type));
  }
  if (codec != static_cast<std::uint32_t>(TraceCodec::kRaw)) {
    error(at, "unsupported codec " + std::to_string(codec), "this build reads only raw (0) blocks");
  }
  if (payload > size_ - offset_) {
    error(at, "truncated block",
          "expected " + std::to_string(payload) + " payload bytes, " + std::to_string(size_ - offset_) + " left");
  }
  const auto kind = static_cast<TraceBlockKind>(type);
  if (kind == TraceBlockKind::kEnd) {
    read_end(at, payload, count);
    done_ = true;
    return false;
  }
  if (cg > static_cast<std::uint32_t>(std::numeric_limits<int>::max())) {
    error(at, "core group " + std::to_string(cg) + " out of range");
  }
  if (static_cast<std::int64_t>(cg) < last_cg_) {
    error(at, "block of core group " + std::to_string(cg) + " after core group " + std::to_string(last_cg_),
          "groups must appear in cg order");
  }
  block.kind = kind;
  block.cg = static_cast<int>(cg);
  if (kind == TraceBlockKind::kDma) {
    block.markers.clear();
    read_dma(at, payload, count, block.chunk);
  } else {
    block.chunk = DmaChunk{};
    read_markers(at, payload, count, block.markers);
  }
  if (static_cast<std::int64_t>(cg) != last_cg_) {
    ++totals_.groups;
    last_cg_ = cg;
  }
  ++totals_.blocks;
  return true;
}

namespace {

template <typename T>
void resize_column(std::vector<T>& v, std::size_t n) {
  v.clear();
  v.resize(n);
}

}  // namespace

void TraceReader::read_dma(std::uint64_t at, std::uint64_t payload, std::uint32_t count, DmaChunk& chunk) {
  if (count > kTraceMaxBlockEvents) {
    error(at, "DMA block too large",
          std::to_string(count) + " events, at most " + std::to_string(kTraceMaxBlockEvents));
  }
  const std::uint64_t fixed = std::uint64_t{count} * kEventBytes + 4;
  if (payload < fixed) {
    error(at, "corrupt DMA block",
          std::to_string(payload) + " payload bytes cannot hold " + std::to_string(count) + " events");
  }
  const std::size_t n = count;
  const auto column = [&](auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    resize_column(v, n);
    if constexpr (kLittle) {
      read_exact(v.data(), n * sizeof(T));
    } else {
      scratch_.resize(n * sizeof(T));
      read_exact(scratch_.data(), scratch_.size());
      for (std::size_t i = 0; i < n; ++i) v[i] = get_le<T>(scratch_.data() + i * sizeof(T));
    }
  };
  column(chunk.issue);
  column(chunk.start_delta);
  column(chunk.duration);
  column(chunk.main48_core16);
  column(chunk.length);
  column(chunk.ldm24_flags8);

  std::array<unsigned char, 4> sc{};
  read_exact(sc.data(), sc.size());
  const auto strided_count = get_le<std::uint32_t>(sc.data());
  if (strided_count > count || payload != fixed + std::uint64_t{strided_count} * kStridedBytes) {
    error(at, "corrupt DMA block",
          "strided table of " + std::to_string(strided_count) + " entries does not match " + std::to_string(count) +
              " events in " + std::to_string(payload) + " payload bytes");
  }
  scratch_.resize(std::size_t{strided_count} * kStridedBytes);
  read_exact(scratch_.data(), scratch_.size());
  chunk.strided.resize(strided_count);
  for (std::size_t i = 0; i < strided_count; ++i) {
    const unsigned char* p = scratch_.data() + i * kStridedBytes;
    auto& s = chunk.strided[i];
    s.index = get_le<std::uint32_t>(p);
    s.bsize = get_le<std::uint32_t>(p + 4);
    s.stride = get_le<std::uint32_t>(p + 8);
    if (s.index >= count || (i > 0 && s.index <= chunk.strided[i - 1].index)) {
      error(at, "corrupt DMA block",
            "strided entry " + std::to_string(i) + " has bad index " + std::to_string(s.index));
    }
  }
  // Flags must name known op/mode/status values, and the spare bits must be zero.
  constexpr std::uint32_t kMode = static_cast<std::uint32_t>(DmaMode::kRow);
  constexpr std::uint32_t kStatus = static_cast<std::uint32_t>(DmaStatus::kLintWarning);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t lf = chunk.ldm24_flags8[i];
    if ((lf >> 29) != 0 || ((lf >> DmaChunk::kModeShift) & 3u) > kMode ||
        ((lf >> DmaChunk::kStatusShift) & 3u) > kStatus) {
      error(at, "corrupt DMA block", "event " + std::to_string(i) + " has invalid flags");
    }
  }
  totals_.dma_events += count;
}

void TraceReader::read_markers(std::uint64_t at, std::uint64_t payload, std::uint32_t count, std::vector<Marker>& out) {
  if (count > kTraceMaxBlockMarkers) {
    error(at, "markers block too large",
          std::to_string(count) + " markers, at most " + std::to_string(kTraceMaxBlockMarkers));
  }
  if (payload < std::uint64_t{count} * kMarkerFixedBytes) {
    error(at, "corrupt markers block",
          std::to_string(payload) + " payload bytes cannot hold " + std::to_string(count) + " markers");
  }
  const std::uint64_t base = offset_;
  scratch_.resize(static_cast<std::size_t>(payload));
  read_exact(scratch_.data(), scratch_.size());
  out.clear();
  out.reserve(count);
  std::size_t pos = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const unsigned char* p = scratch_.data() + pos;
    const std::size_t left = scratch_.size() - pos;
    if (left < kMarkerFixedBytes) {
      error(base + pos, "truncated marker", "expected 21 bytes, " + std::to_string(left) + " left in its block");
    }
    if (p[0] > static_cast<unsigned char>(MarkerKind::kLintWarning)) {
      error(base + pos, "corrupt marker", "unknown kind " + std::to_string(p[0]));
    }
    Marker m;
    m.kind = static_cast<MarkerKind>(p[0]);
    m.cycle = get_le<std::uint64_t>(p + 1);
    m.core = get_le<std::int32_t>(p + 9);
    m.value = get_le<std::uint32_t>(p + 13);
    const auto text_bytes = get_le<std::uint32_t>(p + 17);
    if (text_bytes > left - kMarkerFixedBytes) {
      error(base + pos, "truncated marker",
            "expected " + std::to_string(text_bytes) + " text bytes, " + std::to_string(left - kMarkerFixedBytes) +
                " left in its block");
    }
    m.text.assign(reinterpret_cast<const char*>(p + kMarkerFixedBytes), text_bytes);
    out.push_back(std::move(m));
    pos += kMarkerFixedBytes + text_bytes;
  }
  if (pos != scratch_.size()) {
    error(base + pos, "corrupt markers block", std::to_string(scratch_.size() - pos) + " unexplained trailing bytes");
  }
  totals_.markers += count;
}

void TraceReader::read_end(std::uint64_t at, std::uint64_t payload, std::uint32_t count) {
  if (payload != kEndPayloadBytes || count != 0) {
    error(at, "corrupt end block", std::to_string(payload) + " payload bytes, count " + std::to_string(count));
  }
  std::array<unsigned char, kEndPayloadBytes> e{};
  read_exact(e.data(), e.size());
  const TraceTotals file{get_le<std::uint64_t>(e.data()), get_le<std::uint64_t>(e.data() + 8),
                         get_le<std::uint64_t>(e.data() + 16), get_le<std::uint64_t>(e.data() + 24)};
  if (file != totals_) {
    const auto show = [](const TraceTotals& t) {
      return std::to_string(t.dma_events) + " DMA events, " + std::to_string(t.markers) + " markers, " +
             std::to_string(t.blocks) + " blocks, " + std::to_string(t.groups) + " groups";
    };
    error(at, "end block totals do not match the blocks read",
          "end block says " + show(file) + "; read " + show(totals_));
  }
  if (offset_ != size_) {
    error(offset_, "trailing bytes after the end block", std::to_string(size_ - offset_) + " bytes");
  }
}

std::vector<TraceRecorder> TraceReader::read_all(const std::filesystem::path& path) {
  TraceReader reader(path);
  std::vector<TraceRecorder> groups;
  TraceBlock block;
  while (reader.next(block)) {
    if (groups.empty() || groups.back().cg() != block.cg) groups.emplace_back(block.cg, true);
    if (block.kind == TraceBlockKind::kDma) {
      groups.back().append_chunk(std::move(block.chunk));
      block.chunk = DmaChunk{};
    } else {
      for (auto& m : block.markers) groups.back().mark(std::move(m));
    }
  }
  return groups;
}

}  // namespace ldmsim
