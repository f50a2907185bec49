// Writes the seed traces of the trace reader fuzzer into the directory given as argv[1]: small valid files that
// reach every block kind and codec, written by the library's own writer so they follow the current format.
//   v2-zstd.ldmtrace        TraceWriter with its default codec (zstd): three groups, strided events, every
//                           op/mode/status, every marker kind, an empty group
//   v2-raw.ldmtrace         the same content with TraceCodec::kRaw
//   v2-zstd-small.ldmtrace  one group of a few events, zstd (short frames: raw/RLE zstd blocks)
//   v2-zstd-large.ldmtrace  one regular 4096-event chunk, zstd (a frame of two compressed zstd blocks)
//   v2-mixed.ldmtrace       raw and zstd DMA blocks in one file (the format allows it; TraceWriter never does)
//   v2-zstd-stored.ldmtrace zstd DMA blocks whose frames hold stored (uncompressed) zstd blocks and no checksum,
//                           as any zstd encoder may write them: mutations there reach the decoded columns
//                           (delta decoding, strided table and flag checks) instead of failing the checksum
//   v1-raw.ldmtrace         the small group written raw, with the version field set to 1
// Built and run only by scripts/fuzz_trace_reader.sh; not part of the CMake build.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "block.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace {

namespace fs = std::filesystem;
using ldmsim::DmaChunk;
using ldmsim::DmaEvent;
using ldmsim::DmaMode;
using ldmsim::DmaOp;
using ldmsim::DmaStatus;
using ldmsim::Marker;
using ldmsim::MarkerKind;
using ldmsim::TraceCodec;

/// What Machine::write_trace writes, shortened: the keys the summary and exports read (a checking report too).
nlohmann::json header(std::uint64_t cycles) {
  return {{"arch",
           {{"name", "sw26010"},
            {"clock_hz", 1.45e9},
            {"core_groups", {{"count", 4}, {"cores", {{"rows", 8}, {"cols", 8}, {"ldm_bytes", 65536}}}}}}},
          {"cycles", cycles},
          {"seconds", static_cast<double>(cycles) / 1.45e9},
          {"run", {{"tool_version", "0.1.0"}, {"workload", "fuzz-seed"}}},
          {"fault", nullptr},
          {"check", nlohmann::json::array({{{"kind", "dma-race"},
                                            {"model", "fuzz-seed"},
                                            {"kernel", "seed_kernel"},
                                            {"cg", 1},
                                            {"core", 7},
                                            {"cycle", 1200},
                                            {"count", 2},
                                            {"message", "a put overlaps a get of the same bytes"}}})}};
}

/// `n` varied events of 64 cores: every op/mode/status combination, strided ones, extreme field values.
DmaChunk varied_chunk(std::size_t n) {
  DmaChunk chunk;
  std::uint64_t cycle = 1000;
  for (std::size_t i = 0; i < n; ++i) {
    DmaEvent e;
    e.issue = cycle;
    e.start = e.issue + (i % 5 == 0 ? 0 : 17 * i);
    e.end = e.start + (i == 7 ? 0xFFFFFFFFu : 64 + 3 * i);
    e.main = i == 3 ? DmaChunk::kMainLimit - 64 : 0x10000 + 256 * i;
    e.ldm = i == 4 ? DmaChunk::kLdmLimit - 32 : static_cast<std::uint32_t>(32 * i);
    e.length = i == 5 ? 0 : static_cast<std::uint32_t>(32u << (i % 8));
    e.core = static_cast<std::uint16_t>((i * 7) % 64);
    e.op = static_cast<DmaOp>(i % 2);
    e.mode = static_cast<DmaMode>((i / 2) % 3);
    e.status = static_cast<DmaStatus>((i / 6) % 3);
    if (i % 4 == 1) {
      e.bsize = 32;
      e.stride = static_cast<std::uint32_t>(64 * (i % 3));
    }
    chunk.push(e);
    cycle += 5 + (i % 3);
  }
  return chunk;
}

/// `n` events of one steady stream (what a streaming kernel records): compresses to a few bytes per event.
DmaChunk regular_chunk(std::size_t n) {
  DmaChunk chunk;
  for (std::size_t i = 0; i < n; ++i) {
    DmaEvent e;
    e.issue = 5000 + 40 * i;
    e.start = e.issue + 12;
    e.end = e.start + 96;
    e.main = 0x200000 + 512 * i;
    e.ldm = static_cast<std::uint32_t>(512 * (i % 64));
    e.length = 512;
    e.core = static_cast<std::uint16_t>(i % 64);
    e.op = i % 2 == 0 ? DmaOp::kGet : DmaOp::kPut;
    chunk.push(e);
  }
  return chunk;
}

std::vector<Marker> every_marker(std::uint64_t base) {
  return {{MarkerKind::kLaunchBegin, base, -1, 0, "stream_kernel"},
          {MarkerKind::kBarrier, base + 500, -1, 0, ""},
          {MarkerKind::kBarrier, base + 600, 3, 1, ""},
          {MarkerKind::kBarrier, base + 700, 9, 2, ""},
          {MarkerKind::kLintWarning, base + 710, 5, 0, "dma length 100 is not a multiple of 32"},
          {MarkerKind::kFault, base + 720, 6, 1, "DMA out of bounds at main 0x1000"},
          {MarkerKind::kCoreExit, base + 800, 0, 0, ""},
          {MarkerKind::kCoreExit, base + 810, 63, 0, ""},
          {MarkerKind::kLaunchEnd, base + 900, -1, 0, "stream_kernel"}};
}

std::vector<unsigned char> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, const std::vector<unsigned char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

/// The full seed: group 0 varied events in two blocks plus every marker, group 2 a steady stream, group 5 empty.
void write_full(const fs::path& p, TraceCodec codec) {
  ldmsim::TraceWriter w(p, header(20000), codec);
  w.write_dma(0, varied_chunk(40));
  w.write_dma(0, varied_chunk(9));
  w.write_markers(0, every_marker(1000));
  w.write_dma(2, regular_chunk(300));
  w.write_markers(2, every_marker(4000));
  w.write_markers(5, {});
  w.finish();
}

void write_small(const fs::path& p, TraceCodec codec) {
  ldmsim::TraceWriter w(p, header(3000), codec);
  w.write_dma(1, varied_chunk(6));
  const std::vector<Marker> markers = {{MarkerKind::kLaunchBegin, 900, -1, 0, "k"},
                                       {MarkerKind::kLaunchEnd, 2000, -1, 0, "k"}};
  w.write_markers(1, markers);
  w.finish();
}

/// Blocks written one by one with the block encoder: group 0 raw then zstd, group 1 zstd then raw.
void write_mixed(const fs::path& p) {
  const std::string text = header(20000).dump();
  std::vector<unsigned char> file(16);
  for (std::size_t i = 0; i < 8; ++i) file[i] = static_cast<unsigned char>(ldmsim::kTraceMagic[i]);
  ldmsim::detail::put_le(file.data() + 8, ldmsim::kTraceFormatVersion);
  ldmsim::detail::put_le(file.data() + 12, static_cast<std::uint32_t>(text.size()));
  file.insert(file.end(), text.begin(), text.end());
  ldmsim::detail::BlockCodec codec;
  const DmaChunk a = varied_chunk(12);
  const DmaChunk b = regular_chunk(64);
  codec.append_dma(file, 0, a, 0, a.size(), TraceCodec::kRaw);
  codec.append_dma(file, 0, b, 0, b.size(), TraceCodec::kZstd);
  const auto markers = every_marker(100);
  ldmsim::detail::append_markers_block(file, 0, markers);
  codec.append_dma(file, 1, a, 0, 5, TraceCodec::kZstd);
  codec.append_dma(file, 1, a, 5, a.size(), TraceCodec::kRaw);
  ldmsim::detail::append_markers_block(file, 1, {});
  const std::array<std::uint64_t, 4> totals = {a.size() + b.size() + a.size(), markers.size(), 6, 2};
  const std::size_t at = file.size();
  file.resize(at + ldmsim::detail::kBlockHeaderBytes + 32);
  ldmsim::detail::put_block_header(file.data() + at, {ldmsim::detail::kEndBlock, 0, 0, 32, 0});
  for (std::size_t i = 0; i < totals.size(); ++i) {
    ldmsim::detail::put_le(file.data() + at + ldmsim::detail::kBlockHeaderBytes + 8 * i, totals[i]);
  }
  spit(p, file);
}

/// A zstd frame of stored blocks (no compression, no checksum) holding `data`, per RFC 8878.
std::vector<unsigned char> stored_frame(const unsigned char* data, std::size_t size) {
  std::vector<unsigned char> f(4 + 1 + 8);
  ldmsim::detail::put_le(f.data(), std::uint32_t{0xFD2FB528});
  f[4] = 0xE0;  // frame content size in 8 bytes, single segment, no checksum, no dictionary
  ldmsim::detail::put_le(f.data() + 5, static_cast<std::uint64_t>(size));
  constexpr std::size_t kMaxBlock = std::size_t{128} << 10;
  std::size_t at = 0;
  do {
    const std::size_t n = std::min(size - at, kMaxBlock);
    const auto last = static_cast<std::uint32_t>(at + n == size);
    const std::uint32_t h = last | static_cast<std::uint32_t>(n) << 3;  // block type 0: raw
    f.push_back(static_cast<unsigned char>(h));
    f.push_back(static_cast<unsigned char>(h >> 8));
    f.push_back(static_cast<unsigned char>(h >> 16));
    f.insert(f.end(), data + at, data + at + n);
    at += n;
  } while (at < size);
  return f;
}

/// One DMA block of events [begin, end) of `chunk`, zstd codec, its frame made of stored blocks.
void append_stored_dma(std::vector<unsigned char>& out, std::uint32_t cg, const DmaChunk& chunk, std::size_t begin,
                       std::size_t end) {
  namespace d = ldmsim::detail;
  std::vector<unsigned char> raw;
  d::BlockCodec codec;
  codec.append_dma(raw, cg, chunk, begin, end, TraceCodec::kRaw);
  unsigned char* cols = raw.data() + d::kBlockHeaderBytes;
  const std::size_t size = raw.size() - d::kBlockHeaderBytes;
  const std::size_t n = end - begin;
  for (const std::size_t column : {std::size_t{0}, 16 * n}) {  // issue and main48_core16 are delta-coded
    std::uint64_t previous = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto v = d::get_le<std::uint64_t>(cols + column + 8 * i);
      d::put_le(cols + column + 8 * i, v - previous);
      previous = v;
    }
  }
  const auto frame = stored_frame(cols, size);
  const std::size_t at = out.size();
  out.resize(at + d::kBlockHeaderBytes + d::kZstdSizeBytes);
  d::put_block_header(out.data() + at, {d::kDmaBlock, cg, static_cast<std::uint32_t>(TraceCodec::kZstd),
                                        d::kZstdSizeBytes + frame.size(), static_cast<std::uint32_t>(n)});
  d::put_le(out.data() + at + d::kBlockHeaderBytes, static_cast<std::uint64_t>(size));
  out.insert(out.end(), frame.begin(), frame.end());
}

/// Group 0: a varied chunk in two stored-frame blocks and every marker; group 3: a steady stream.
void write_stored(const fs::path& p) {
  namespace d = ldmsim::detail;
  const std::string text = header(20000).dump();
  std::vector<unsigned char> file(16);
  for (std::size_t i = 0; i < 8; ++i) file[i] = static_cast<unsigned char>(ldmsim::kTraceMagic[i]);
  d::put_le(file.data() + 8, ldmsim::kTraceFormatVersion);
  d::put_le(file.data() + 12, static_cast<std::uint32_t>(text.size()));
  file.insert(file.end(), text.begin(), text.end());
  const DmaChunk a = varied_chunk(24);
  const DmaChunk b = regular_chunk(40);
  append_stored_dma(file, 0, a, 0, 10);
  append_stored_dma(file, 0, a, 10, a.size());
  const auto markers = every_marker(100);
  d::append_markers_block(file, 0, markers);
  append_stored_dma(file, 3, b, 0, b.size());
  d::append_markers_block(file, 3, {});
  const std::array<std::uint64_t, 4> totals = {a.size() + b.size(), markers.size(), 5, 2};
  const std::size_t at = file.size();
  file.resize(at + d::kBlockHeaderBytes + 32);
  d::put_block_header(file.data() + at, {d::kEndBlock, 0, 0, 32, 0});
  for (std::size_t i = 0; i < totals.size(); ++i) d::put_le(file.data() + at + d::kBlockHeaderBytes + 8 * i, totals[i]);
  spit(p, file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    const fs::path dir = argv[1];
    fs::create_directories(dir);
    write_full(dir / "v2-zstd.ldmtrace", TraceCodec::kZstd);
    write_full(dir / "v2-raw.ldmtrace", TraceCodec::kRaw);
    write_small(dir / "v2-zstd-small.ldmtrace", TraceCodec::kZstd);
    {
      ldmsim::TraceWriter w(dir / "v2-zstd-large.ldmtrace", header(200000));  // the default codec: zstd
      w.write_dma(0, regular_chunk(DmaChunk::kCapacity));
      w.write_markers(0, every_marker(1000));
      w.finish();
    }
    write_mixed(dir / "v2-mixed.ldmtrace");
    write_stored(dir / "v2-zstd-stored.ldmtrace");
    {  // the hand-made frames must decode to what was encoded, not merely parse
      const auto groups = ldmsim::TraceReader::read_all(dir / "v2-zstd-stored.ldmtrace");
      std::vector<DmaEvent> got;
      std::vector<DmaEvent> want;
      for (const auto& g : groups) g.for_each_dma([&](const DmaEvent& e) { got.push_back(e); });
      for (const auto& c : {varied_chunk(24), regular_chunk(40)}) {
        for (std::size_t i = 0; i < c.size(); ++i) want.push_back(c.at(i));
      }
      if (got != want) throw std::runtime_error("v2-zstd-stored.ldmtrace does not decode to its events");
    }
    write_small(dir / "v1-raw.ldmtrace", TraceCodec::kRaw);
    auto v1 = slurp(dir / "v1-raw.ldmtrace");
    ldmsim::detail::put_le(v1.data() + 8, std::uint32_t{1});
    spit(dir / "v1-raw.ldmtrace", v1);

    // Every seed must read back cleanly, with the codecs it claims: a seed the reader rejects seeds nothing.
    for (const char* name : {"v2-zstd.ldmtrace", "v2-raw.ldmtrace", "v2-zstd-small.ldmtrace", "v2-zstd-large.ldmtrace",
                             "v2-mixed.ldmtrace", "v2-zstd-stored.ldmtrace", "v1-raw.ldmtrace"}) {
      const auto bytes = slurp(dir / name);
      std::size_t zstd_blocks = 0;
      std::size_t raw_dma_blocks = 0;
      std::size_t at = 16 + ldmsim::detail::get_le<std::uint32_t>(bytes.data() + 12);
      while (at + ldmsim::detail::kBlockHeaderBytes <= bytes.size()) {
        const auto h = ldmsim::detail::get_block_header(bytes.data() + at);
        if (h.type == ldmsim::detail::kDmaBlock) ++(h.codec == 1 ? zstd_blocks : raw_dma_blocks);
        at += ldmsim::detail::kBlockHeaderBytes + h.payload;
      }
      ldmsim::TraceReader reader(dir / name);
      ldmsim::TraceBlock block;
      while (reader.next(block)) {
      }
      std::printf("seed %-24s %6zu bytes, version %u, %zu zstd + %zu raw DMA blocks, %llu events, %llu markers\n", name,
                  bytes.size(), reader.version(), zstd_blocks, raw_dma_blocks,
                  static_cast<unsigned long long>(reader.totals().dma_events),
                  static_cast<unsigned long long>(reader.totals().markers));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
