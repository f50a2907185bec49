// Trace file writer and reader. DMA columns go to and from the file with one write/read per column (raw
// little-endian, byte-swapped only on big-endian hosts); every size read from the file is checked against the
// bytes that remain before anything is allocated.
#include "ldmsim/trace/file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>
#include <type_traits>
#include <utility>

#include "block.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/input_file.hpp"

namespace ldmsim {

using detail::get_le;
using detail::kBlockHeaderBytes;
using detail::put_le;

namespace {

constexpr std::size_t kFileHeaderBytes = 16;  // magic, version, header length
constexpr std::size_t kEndPayloadBytes = 32;  // four u64 totals

static_assert(kTraceMagic.size() == 8);

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

TraceWriter::TraceWriter() = default;

TraceWriter::TraceWriter(const std::filesystem::path& path, const nlohmann::json& header, TraceCodec codec) {
  open(path, header, codec);
}

TraceWriter::~TraceWriter() {
  file_.reset();  // an unfinished file's temporary is removed; the target stays as it was
}

void TraceWriter::open(const std::filesystem::path& path, const nlohmann::json& header, TraceCodec codec) {
  if (open_) throw std::logic_error("TraceWriter::open: " + quoted(path_) + " is still open");
  if (!header.is_object()) throw std::invalid_argument("TraceWriter::open: the trace header must be a JSON object");
  const std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("TraceWriter::open: trace header of " + std::to_string(text.size()) +
                            " bytes exceeds 4 GiB");
  }
  if (codec != TraceCodec::kRaw && codec != TraceCodec::kZstd) {
    throw std::invalid_argument("TraceWriter::open: unknown codec " + std::to_string(static_cast<unsigned>(codec)));
  }
  codec_ = codec;
  if (!codec_state_) codec_state_ = std::make_unique<detail::BlockCodec>();
  path_ = path;
  totals_ = {};
  last_cg_ = -1;
  file_ = std::make_unique<AtomicFile>(path, "trace file");
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
  file_->write(data, size);
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

void TraceWriter::write_block(std::span<const unsigned char> block) {
  write_bytes(block.data(), block.size());
  const auto h = detail::get_block_header(block.data());
  ++totals_.blocks;
  if (h.type == detail::kDmaBlock) {
    totals_.dma_events += h.count;
  } else {
    totals_.markers += h.count;
  }
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
    scratch_.clear();
    codec_state_->append_dma(scratch_, static_cast<std::uint32_t>(cg), chunk, begin,
                             std::min<std::size_t>(n, begin + kTraceMaxBlockEvents), codec_);
    write_block(scratch_);
  }
}

void TraceWriter::write_markers(int cg, std::span<const Marker> markers) {
  check_cg(cg, false);
  std::size_t begin = 0;
  do {
    const std::size_t n = std::min<std::size_t>(markers.size() - begin, kTraceMaxBlockMarkers);
    scratch_.clear();
    detail::append_markers_block(scratch_, static_cast<std::uint32_t>(cg), markers.subspan(begin, n));
    write_block(scratch_);
    begin += n;
  } while (begin < markers.size());
}

void TraceWriter::write_group(const TraceRecorder& group) {
  const int cg = group.cg();
  check_cg(cg, true);
  // Spilled blocks are already encoded: copy them unless they use another codec than this file.
  DmaChunk decoded;
  group.for_each_spilled_block([&](std::span<const unsigned char> block) {
    const auto h = detail::get_block_header(block.data());
    if (h.type == detail::kDmaBlock && h.codec != static_cast<std::uint32_t>(codec_)) {
      codec_state_->decode_dma(block.subspan(kBlockHeaderBytes), h.codec, h.count, decoded);
      write_dma(cg, decoded);
    } else {
      write_block(block);
    }
  });
  for (const auto& chunk : group.memory_chunks()) write_dma(cg, chunk);
  write_markers(cg, group.memory_markers());
}

void TraceWriter::finish() {
  if (!open_) throw std::logic_error("TraceWriter::finish: no trace file is open");
  std::array<unsigned char, kBlockHeaderBytes + kEndPayloadBytes> end{};
  detail::put_block_header(end.data(), {detail::kEndBlock, 0, 0, kEndPayloadBytes, 0});
  put_le(end.data() + kBlockHeaderBytes, totals_.dma_events);
  put_le(end.data() + kBlockHeaderBytes + 8, totals_.markers);
  put_le(end.data() + kBlockHeaderBytes + 16, totals_.blocks);
  put_le(end.data() + kBlockHeaderBytes + 24, totals_.groups);
  write_bytes(end.data(), end.size());
  file_->commit();
  file_.reset();
  open_ = false;
}

void write_trace(const std::filesystem::path& path, const nlohmann::json& header,
                 std::span<const TraceRecorder* const> groups, TraceCodec codec) {
  std::vector<const TraceRecorder*> sorted(groups.begin(), groups.end());
  if (std::find(sorted.begin(), sorted.end(), nullptr) != sorted.end()) {
    throw std::invalid_argument("write_trace: null core-group recorder");
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->cg() < b->cg(); });
  TraceWriter writer(path, header, codec);
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
  if (version_ < kTraceOldestFormatVersion || version_ > kTraceFormatVersion) {
    error(8, "unsupported trace format version " + std::to_string(version_),
          "this build reads versions " + std::to_string(kTraceOldestFormatVersion) + " to " +
              std::to_string(kTraceFormatVersion));
  }
  const std::uint32_t header_bytes = get_le<std::uint32_t>(head.data() + 12);
  if (header_bytes > size_ - offset_) {
    error(offset_, "truncated header",
          "expected " + std::to_string(header_bytes) + " bytes, " + std::to_string(size_ - offset_) + " left");
  }
  std::string text(header_bytes, '\0');
  const std::uint64_t at = offset_;
  read_exact(text.data(), text.size());
  // Copying and destroying a JSON value recurses once per nesting level: bound it before parsing.
  if (json_nesting_depth(text, static_cast<int>(kTraceMaxHeaderDepth)) > static_cast<int>(kTraceMaxHeaderDepth)) {
    error(at, "invalid header JSON", "nested more than " + std::to_string(kTraceMaxHeaderDepth) + " levels deep");
  }
  try {
    header_ = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    error(at, "invalid header JSON", e.what());
  }
  if (!header_.is_object()) error(at, "invalid header JSON", "not an object");
  // The tools read the arch tree's objects with nlohmann's value(), which throws on another type: a damaged or
  // foreign header is named here, with its offset (docs/trace-format.md). Other keys are read leniently.
  const auto object_field = [&](const nlohmann::json& parent, const char* key,
                                const std::string& name) -> const nlohmann::json* {
    const auto it = parent.find(key);
    if (it == parent.end()) return nullptr;
    if (!it->is_object()) {
      error(at, "invalid header JSON", fmt::format("\"{}\" must be an object, not {}", name, it->type_name()));
    }
    return &*it;
  };
  if (const nlohmann::json* arch = object_field(header_, "arch", "arch")) {
    if (const nlohmann::json* groups = object_field(*arch, "core_groups", "arch.core_groups")) {
      (void)object_field(*groups, "cores", "arch.core_groups.cores");
    }
  }
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
  const bool compressed_dma =
      type == detail::kDmaBlock && version_ >= 2 && codec == static_cast<std::uint32_t>(TraceCodec::kZstd);
  if (codec != static_cast<std::uint32_t>(TraceCodec::kRaw) && !compressed_dma) {
    error(at, "unsupported codec " + std::to_string(codec),
          version_ >= 2 ? "DMA blocks may be raw (0) or zstd (1), other blocks raw"
                        : "version 1 files hold only raw (0) blocks");
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
  if (cg >= kMaxCoreGroups) {  // per-group tables of readers are sized by this, so a hostile file cannot inflate them
    error(at, "core group " + std::to_string(cg) + " out of range",
          "an arch has at most " + std::to_string(kMaxCoreGroups) + " core groups");
  }
  if (static_cast<std::int64_t>(cg) < last_cg_) {
    error(at, "block of core group " + std::to_string(cg) + " after core group " + std::to_string(last_cg_),
          "groups must appear in cg order");
  }
  block.kind = kind;
  block.cg = static_cast<int>(cg);
  if (kind == TraceBlockKind::kDma) {
    block.markers.clear();
    read_dma(at, payload, codec, count, block.chunk);
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

TraceReader::TraceReader() = default;
TraceReader::TraceReader(const std::filesystem::path& path) {
  open(path);
}
TraceReader::~TraceReader() = default;
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;

void TraceReader::read_payload(std::uint64_t payload) {
  scratch_.resize(static_cast<std::size_t>(payload));  // payload <= bytes left in the file, checked by next()
  read_exact(scratch_.data(), scratch_.size());
}

void TraceReader::read_dma(std::uint64_t at, std::uint64_t payload, std::uint32_t codec, std::uint32_t count,
                           DmaChunk& chunk) {
  if (count > kTraceMaxBlockEvents) {
    error(at, "DMA block too large",
          std::to_string(count) + " events, at most " + std::to_string(kTraceMaxBlockEvents));
  }
  if (payload > detail::max_dma_payload(codec, count)) {
    error(at, "corrupt DMA block",
          std::to_string(payload) + " payload bytes are more than " + std::to_string(count) + " events can need");
  }
  if (skip_dma_) {
    chunk.clear();
    in_.seekg(static_cast<std::streamoff>(payload), std::ios::cur);
    if (!in_) error(offset_, "unexpected end of file", "the file changed while it was read?");
    offset_ += payload;
    totals_.dma_events += count;
    return;
  }
  read_payload(payload);
  if (!codec_state_) codec_state_ = std::make_unique<detail::BlockCodec>();
  try {
    codec_state_->decode_dma(scratch_, codec, count, chunk);
  } catch (const detail::BlockDecodeError& e) {
    error(at, e.problem, e.detail);  // the block's offset: a compressed block has no meaningful inner offset
  }
  totals_.dma_events += count;
}

void TraceReader::read_markers(std::uint64_t at, std::uint64_t payload, std::uint32_t count, std::vector<Marker>& out) {
  if (count > kTraceMaxBlockMarkers) {
    error(at, "markers block too large",
          std::to_string(count) + " markers, at most " + std::to_string(kTraceMaxBlockMarkers));
  }
  const std::uint64_t base = offset_;
  read_payload(payload);
  try {
    detail::decode_markers(scratch_, count, out);
  } catch (const detail::BlockDecodeError& e) {
    error(e.offset == detail::BlockDecodeError::kWholeBlock ? at : base + e.offset, e.problem, e.detail);
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
