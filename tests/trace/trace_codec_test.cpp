// Tests for the trace file codecs (format version 2): raw and zstd DMA blocks round-trip every packed value,
// zstd compresses a realistic trace, version 1 files stay readable, and damaged compressed blocks are reported
// as TraceFormatError at the block's offset, never misread.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ldmsim/trace/codec.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"
#include "trace_tools_support.hpp"

namespace fs = std::filesystem;
using ldmsim::DmaChunk;
using ldmsim::DmaEvent;
using ldmsim::DmaMode;
using ldmsim::DmaOp;
using ldmsim::DmaStatus;
using ldmsim::Marker;
using ldmsim::MarkerKind;
using ldmsim::TraceBlock;
using ldmsim::TraceBlockKind;
using ldmsim::TraceCodec;
using ldmsim::TraceFormatError;
using ldmsim::TraceReader;
using ldmsim::TraceRecorder;
using ldmsim::TraceWriter;
using trace_tools_test::TempDir;

namespace {

using Bytes = std::vector<unsigned char>;

constexpr std::uint32_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kIssueMax = 0 - (std::uint64_t{1} << 33);  // 2^64 - 2^33: issue + 2 * (2^32 - 1) fits
constexpr std::uint64_t kMainMax = (std::uint64_t{1} << 48) - 4;
constexpr std::uint32_t kLdmMax = (1u << 24) - 4;
constexpr std::size_t kFileHeaderBytes = 16;
constexpr std::size_t kBlockHeaderBytes = 24;
constexpr std::size_t kEventBytes = 32;
constexpr std::size_t kStridedBytes = 12;

Bytes read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const Bytes& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <typename T>
T get_le(const Bytes& b, std::size_t at) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v | static_cast<T>(T{b.at(at + i)} << (8 * i)));
  return v;
}

template <typename T>
void put_le(Bytes& b, std::size_t at, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) b.at(at + i) = static_cast<unsigned char>(v >> (8 * i));
}

std::ptrdiff_t diff(std::size_t n) {
  return static_cast<std::ptrdiff_t>(n);
}

/// One block as laid out in the file (docs/trace-format.md).
struct BlockAt {
  std::size_t offset = 0;  ///< of the 24-byte block header
  std::uint32_t type = 0;
  std::uint32_t cg = 0;
  std::uint32_t codec = 0;
  std::uint64_t payload = 0;
  std::uint32_t count = 0;
  std::size_t payload_at() const { return offset + kBlockHeaderBytes; }
};

/// Walks the blocks of a well-formed file, end block included.
std::vector<BlockAt> walk(const Bytes& file) {
  std::vector<BlockAt> blocks;
  std::size_t at = kFileHeaderBytes + get_le<std::uint32_t>(file, 12);
  while (at < file.size()) {
    BlockAt b;
    b.offset = at;
    b.type = get_le<std::uint32_t>(file, at);
    b.cg = get_le<std::uint32_t>(file, at + 4);
    b.codec = get_le<std::uint32_t>(file, at + 8);
    b.payload = get_le<std::uint64_t>(file, at + 12);
    b.count = get_le<std::uint32_t>(file, at + 20);
    blocks.push_back(b);
    at += kBlockHeaderBytes + static_cast<std::size_t>(b.payload);
  }
  REQUIRE(at == file.size());
  REQUIRE(!blocks.empty());
  REQUIRE(blocks.back().type == 3);
  return blocks;
}

std::vector<BlockAt> dma_blocks(const Bytes& file) {
  auto blocks = walk(file);
  blocks.erase(std::remove_if(blocks.begin(), blocks.end(), [](const BlockAt& b) { return b.type != 1; }),
               blocks.end());
  return blocks;
}

/// Everything a file holds, per core group, as the reader returns it.
struct Contents {
  std::map<int, std::vector<DmaEvent>> events;
  std::map<int, std::vector<Marker>> markers;
  std::vector<std::uint32_t> dma_block_sizes;
  ldmsim::TraceTotals totals;
  friend bool operator==(const Contents&, const Contents&) = default;
};

Contents read_contents(const fs::path& p) {
  Contents c;
  TraceReader reader(p);
  TraceBlock block;
  while (reader.next(block)) {
    if (block.kind == TraceBlockKind::kDma) {
      auto& events = c.events[block.cg];
      for (std::size_t i = 0; i < block.chunk.size(); ++i) events.push_back(block.chunk.at(i));
      c.dma_block_sizes.push_back(static_cast<std::uint32_t>(block.chunk.size()));
    } else {
      auto& markers = c.markers[block.cg];
      markers.insert(markers.end(), block.markers.begin(), block.markers.end());
    }
  }
  c.totals = reader.totals();
  return c;
}

/// Reads the whole file; returns the TraceFormatError it throws (any other exception fails the test).
std::optional<TraceFormatError> read_error(const fs::path& p) {
  try {
    read_contents(p);
  } catch (const TraceFormatError& e) {
    return e;
  }
  return std::nullopt;
}

nlohmann::json header() {
  return {{"arch", {{"name", "codec-test"}}}, {"fault", nullptr}};
}

/// Picks one of a few extremes or a uniform value in [lo, hi].
std::uint64_t pick(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi, std::uint64_t align = 1) {
  std::uint64_t v = 0;
  switch (rng() % 5) {
    case 0:
      v = lo;
      break;
    case 1:
      v = hi;
      break;
    case 2:
      v = hi - std::min<std::uint64_t>(hi - lo, rng() % 4096);  // near the top
      break;
    default:
      v = hi - lo == std::numeric_limits<std::uint64_t>::max() ? rng() : lo + rng() % (hi - lo + 1);
  }
  return v - v % align;
}

/// An event with every field drawn from extremes and random values; i selects one of the 18 op/mode/status
/// combinations. The issue cycles jump around the whole range, so their deltas wrap.
DmaEvent extreme_event(std::mt19937_64& rng, std::size_t i, bool strided) {
  DmaEvent e;
  e.issue = pick(rng, 0, kIssueMax);
  e.start = e.issue + pick(rng, 0, kU32Max);
  e.end = e.start + pick(rng, 0, kU32Max);
  e.main = pick(rng, 0, kMainMax, 4);
  e.ldm = static_cast<std::uint32_t>(pick(rng, 0, kLdmMax, 4));
  e.length = static_cast<std::uint32_t>(pick(rng, 0, kU32Max));
  e.core = static_cast<std::uint16_t>(pick(rng, 0, 65535));
  e.op = static_cast<DmaOp>(i % 2);
  e.mode = static_cast<DmaMode>(i / 2 % 3);
  e.status = static_cast<DmaStatus>(i / 6 % 3);
  if (strided) {
    e.bsize = static_cast<std::uint32_t>(pick(rng, 0, kU32Max));
    e.stride = static_cast<std::uint32_t>(pick(rng, 1, kU32Max));  // nonzero: bsize 0 alone would not be strided
  }
  return e;
}

/// n extreme events, strided at the first and last index, at every index in `also_strided`, and 1 in 3 else.
std::vector<DmaEvent> extreme_events(std::uint64_t seed, std::size_t n, const std::vector<std::size_t>& also_strided) {
  std::mt19937_64 rng(seed);
  std::vector<DmaEvent> events;
  for (std::size_t i = 0; i < n; ++i) {
    const bool strided = i == 0 || i + 1 == n || rng() % 3 == 0 ||
                         std::find(also_strided.begin(), also_strided.end(), i) != also_strided.end();
    events.push_back(extreme_event(rng, i, strided));
  }
  // The first two events are all maxima and all minima, whatever the draw.
  if (n >= 2) {
    auto& hi = events[0];
    hi.issue = kIssueMax;
    hi.start = hi.issue + kU32Max;
    hi.end = hi.start + kU32Max;
    hi.main = kMainMax;
    hi.ldm = kLdmMax;
    hi.core = 65535;
    hi.length = hi.bsize = hi.stride = kU32Max;
    auto& lo = events[1];
    lo.issue = lo.start = lo.end = lo.main = 0;
    lo.ldm = lo.length = 0;
    lo.core = 0;
  }
  return events;
}

DmaChunk chunk_of(const std::vector<DmaEvent>& events) {
  DmaChunk chunk;
  for (const auto& e : events) chunk.push(e);
  return chunk;
}

std::vector<Marker> some_markers(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<Marker> markers;
  for (std::size_t i = 0; i < n; ++i) {
    markers.push_back({static_cast<MarkerKind>(i % 6), rng(), i % 4 == 0 ? -1 : static_cast<std::int32_t>(rng()),
                       static_cast<std::uint32_t>(rng()), std::string(i % 7, static_cast<char>('a' + i % 26))});
  }
  return markers;
}

/// A simulated run's trace: 64 cores of a group each stream through three arrays (get a, get b, put c; 1 KiB per
/// request, a strided get now and then), taking turns in issue order; issue cycles rise by a few cycles, the wait
/// for a channel varies, transfer time follows length.
std::vector<DmaEvent> realistic_events(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  constexpr std::uint32_t kLength = 1024;
  std::uint64_t t = 1000;
  std::vector<DmaEvent> events;
  for (std::size_t i = 0; i < n; ++i) {
    const auto core = static_cast<std::uint16_t>(i % 64);
    const std::size_t step = i / 64;  // per core: 0 get a, 1 get b, 2 put c, then the next block
    const std::size_t array = step % 3;
    const std::size_t block = step / 3;
    DmaEvent e;
    t += 1 + rng() % 4;
    e.issue = t;
    e.start = t + (rng() % 8 == 0 ? rng() % 200 : 0);
    e.length = kLength;
    e.end = e.start + 40 + kLength / 32;
    e.core = core;
    e.main = 0x1'0000'0000 + array * 0x1000'0000 + (block * 64 + core) * kLength;
    e.ldm = static_cast<std::uint32_t>(array * 2 * kLength + block % 2 * kLength);
    e.op = array == 2 ? DmaOp::kPut : DmaOp::kGet;
    if (array == 1 && block % 16 == 0) {
      e.bsize = 256;
      e.stride = 768;
    }
    events.push_back(e);
  }
  return events;
}

std::string message_of(const std::optional<TraceFormatError>& e) {
  return e ? std::string(e->what()) : std::string("(no error)");
}

}  // namespace

TEST_CASE("trace codec names parse and print", "[trace][codec]") {
  CHECK(ldmsim::to_string(TraceCodec::kRaw) == "raw");
  CHECK(ldmsim::to_string(TraceCodec::kZstd) == "zstd");
  CHECK(ldmsim::parse_trace_codec("raw") == TraceCodec::kRaw);
  CHECK(ldmsim::parse_trace_codec("zstd") == TraceCodec::kZstd);
  CHECK_FALSE(ldmsim::parse_trace_codec("ZSTD").has_value());
  CHECK_FALSE(ldmsim::parse_trace_codec("").has_value());
  CHECK_FALSE(ldmsim::parse_trace_codec("gzip").has_value());

  TempDir dir;
  CHECK(TraceWriter(dir / "a", header()).codec() == TraceCodec::kZstd);  // the default
  CHECK(TraceWriter(dir / "b", header(), TraceCodec::kRaw).codec() == TraceCodec::kRaw);
  CHECK_THROWS_AS(TraceWriter(dir / "c", header(), static_cast<TraceCodec>(2)), std::invalid_argument);
}

TEST_CASE("raw and zstd trace files round-trip extreme values", "[trace][codec]") {
  TempDir dir;
  const auto big_n = 2 * std::size_t{ldmsim::kTraceMaxBlockEvents} + 100;
  const std::size_t edge = ldmsim::kTraceMaxBlockEvents;
  // cg 0: three random chunks; cg 1: empty; cg 2: one chunk larger than a block, strided on both sides of each
  // block boundary; cg 3: a recorder (4096-event chunks) and markers; cg 4: empty recorder.
  std::vector<std::vector<DmaEvent>> chunks0;
  for (std::uint64_t s = 0; s < 3; ++s) chunks0.push_back(extreme_events(100 + s, 1 + s * 1500, {}));
  const auto big = extreme_events(200, big_n, {edge - 1, edge, 2 * edge - 1, 2 * edge});
  const auto big_chunk = chunk_of(big);
  REQUIRE(big_chunk.strided.front().index == 0);
  REQUIRE(big_chunk.strided.back().index == big_n - 1);
  // Every one of the 18 op/mode/status combinations occurs.
  std::set<std::uint32_t> flags;
  for (std::size_t i = 0; i < 18; ++i) flags.insert(big_chunk.ldm24_flags8[i] >> 24);
  REQUIRE(flags.size() == 18);

  const auto rec_events = extreme_events(300, 4096 + 33, {4095, 4096});
  TraceRecorder rec3(3, true);
  for (const auto& e : rec_events) rec3.record(e);
  const auto markers3 = some_markers(301, 5000);  // two markers blocks
  for (const auto& m : markers3) rec3.mark(m);
  const TraceRecorder rec4(4, true);
  const auto markers0 = some_markers(302, 3);

  auto write = [&](const fs::path& path, TraceCodec codec) {
    TraceWriter w(path, header(), codec);
    for (const auto& c : chunks0) w.write_dma(0, chunk_of(c));
    w.write_markers(0, markers0);
    w.write_markers(1, {});
    w.write_dma(2, big_chunk);
    w.write_group(rec3);
    w.write_group(rec4);
    w.finish();
  };
  const auto raw_path = dir / "raw.ldmtrace";
  const auto zstd_path = dir / "zstd.ldmtrace";
  write(raw_path, TraceCodec::kRaw);
  write(zstd_path, TraceCodec::kZstd);

  Contents expected;
  for (const auto& c : chunks0) {
    expected.events[0].insert(expected.events[0].end(), c.begin(), c.end());
    expected.dma_block_sizes.push_back(static_cast<std::uint32_t>(c.size()));
  }
  expected.markers[0] = markers0;
  expected.markers[1] = {};
  expected.events[2] = big;
  expected.dma_block_sizes.insert(expected.dma_block_sizes.end(), {65536, 65536, 100});
  expected.events[3] = rec_events;
  expected.dma_block_sizes.insert(expected.dma_block_sizes.end(), {4096, 33});
  expected.markers[3] = markers3;
  expected.markers[4] = {};
  expected.totals = {1 + 1501 + 3001 + big_n + rec_events.size(), 3 + 5000, 3 + 1 + 1 + 3 + 2 + 2 + 1, 5};

  for (const auto& [path, codec] : {std::pair{raw_path, 0u}, std::pair{zstd_path, 1u}}) {
    INFO("codec " << codec);
    const auto back = read_contents(path);
    CHECK(back.dma_block_sizes == expected.dma_block_sizes);
    CHECK(back.totals == expected.totals);
    CHECK(back.markers == expected.markers);
    for (const auto& [cg, events] : expected.events) {
      INFO("cg " << cg);
      REQUIRE(back.events.count(cg) == 1);
      const auto& got = back.events.at(cg);
      REQUIRE(got.size() == events.size());
      const auto mismatch = std::mismatch(got.begin(), got.end(), events.begin());
      CHECK(mismatch.first == got.end());
      if (mismatch.first != got.end()) FAIL_CHECK("first difference at event " << (mismatch.first - got.begin()));
    }
    CHECK(TraceReader(path).version() == 2);

    // DMA blocks carry the writer's codec; markers and end blocks are always raw.
    const auto bytes = read_bytes(path);
    for (const auto& b : walk(bytes)) CHECK(b.codec == (b.type == 1 ? codec : 0u));
    // Raw payloads are exactly 32N + 4 + 12S; zstd ones start with D = 32N + 4 + 12S and a zstd frame.
    for (const auto& b : dma_blocks(bytes)) {
      const std::size_t s = get_le<std::uint32_t>(bytes, b.payload_at() + (codec == 0 ? kEventBytes * b.count : 0));
      if (codec == 0) {
        CHECK(b.payload == kEventBytes * b.count + 4 + kStridedBytes * s);
      } else {
        const auto d = get_le<std::uint64_t>(bytes, b.payload_at());
        CHECK(d >= kEventBytes * b.count + 4);
        CHECK(d <= (kEventBytes + kStridedBytes) * b.count + 4);
        CHECK(get_le<std::uint32_t>(bytes, b.payload_at() + 8) == 0xFD2FB528u);  // zstd frame magic
      }
    }
  }
  // The big chunk's strided entries are rebased to each block: the blocks of cg 2 hold them at their first and
  // last index.
  TraceReader reader(zstd_path);
  TraceBlock block;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> cg2_ends;
  while (reader.next(block)) {
    if (block.cg == 2 && block.kind == TraceBlockKind::kDma) {
      cg2_ends.emplace_back(block.chunk.strided.front().index, block.chunk.strided.back().index);
    }
  }
  CHECK(cg2_ends == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 65535}, {0, 65535}, {0, 99}});
}

TEST_CASE("zstd makes a realistic trace over ten times smaller than raw", "[trace][codec]") {
  TempDir dir;
  const std::size_t n = 100'000;
  const auto events = realistic_events(42, n);
  TraceRecorder rec(0, true);
  for (const auto& e : events) rec.record(e);
  const auto write = [&](const fs::path& p, TraceCodec codec) {
    TraceWriter w(p, header(), codec);
    w.write_group(rec);
    w.finish();
    return fs::file_size(p);
  };
  const auto raw = write(dir / "raw.ldmtrace", TraceCodec::kRaw);
  const auto zstd = write(dir / "zstd.ldmtrace", TraceCodec::kZstd);
  const double raw_per_event = static_cast<double>(raw) / static_cast<double>(n);
  const double zstd_per_event = static_cast<double>(zstd) / static_cast<double>(n);
  INFO("raw " << raw << " bytes (" << raw_per_event << " B/event), zstd " << zstd << " bytes (" << zstd_per_event
              << " B/event)");
  CHECK(raw_per_event >= 32.0);
  CHECK(raw_per_event < 33.0);
  // Measured (libzstd 1.5, level 1): raw 32.26 B/event, zstd 1.21 B/event, 1/26.7 of raw. A tenth leaves margin
  // for other zstd versions.
  CHECK(zstd * 10 < raw);
  CHECK(read_contents(dir / "zstd.ldmtrace").events.at(0) == events);
}

TEST_CASE("version 1 files read when raw, and codecs are checked against the version", "[trace][codec]") {
  TempDir dir;
  TraceRecorder rec(1, true);
  for (const auto& e : extreme_events(7, 5000, {})) rec.record(e);
  for (const auto& m : some_markers(8, 10)) rec.mark(m);
  const std::vector<const TraceRecorder*> groups{&rec};
  const auto raw_path = dir / "raw.ldmtrace";
  const auto zstd_path = dir / "zstd.ldmtrace";
  ldmsim::write_trace(raw_path, header(), groups, TraceCodec::kRaw);
  ldmsim::write_trace(zstd_path, header(), groups);  // zstd by default
  const auto raw = read_bytes(raw_path);
  const auto zstd = read_bytes(zstd_path);
  REQUIRE(get_le<std::uint32_t>(raw, 8) == 2);
  REQUIRE(get_le<std::uint32_t>(zstd, 8) == 2);
  const auto expected = read_contents(raw_path);
  REQUIRE(expected.totals.dma_events == 5000);
  CHECK(read_contents(zstd_path) == expected);

  const auto patched = dir / "patched.ldmtrace";
  SECTION("a raw file patched to version 1 reads the same") {
    auto v1 = raw;
    put_le<std::uint32_t>(v1, 8, 1);
    write_bytes(patched, v1);
    CHECK(TraceReader(patched).version() == 1);
    CHECK(read_contents(patched) == expected);
  }
  SECTION("a zstd block in a version 1 file is rejected at that block") {
    auto v1 = zstd;
    put_le<std::uint32_t>(v1, 8, 1);
    write_bytes(patched, v1);
    CHECK(TraceReader(patched).version() == 1);  // the header is fine; the first DMA block is not
    const auto first = dma_blocks(zstd).front();
    const auto e = read_error(patched);
    REQUIRE(e.has_value());
    CHECK(e->offset() == first.offset);
    CHECK_THAT(e->what(), Catch::Contains("unsupported codec 1") && Catch::Contains("version 1") &&
                              Catch::Contains("at byte " + std::to_string(first.offset)));
    CHECK(e->file() == patched);
  }
  SECTION("codec 2 is rejected in a version 2 file") {
    for (const auto* source : {&raw, &zstd}) {
      auto bad = *source;
      const auto second = dma_blocks(bad).at(1);
      put_le<std::uint32_t>(bad, second.offset + 8, 2);
      write_bytes(patched, bad);
      const auto e = read_error(patched);
      REQUIRE(e.has_value());
      CHECK(e->offset() == second.offset);
      CHECK_THAT(e->what(), Catch::Contains("unsupported codec 2"));
    }
  }
  SECTION("codec 1 is rejected on markers and end blocks") {
    const auto blocks = walk(zstd);
    for (const auto& b : blocks) {
      if (b.type == 1) continue;
      auto bad = zstd;
      put_le<std::uint32_t>(bad, b.offset + 8, 1);
      write_bytes(patched, bad);
      const auto e = read_error(patched);
      INFO("block type " << b.type << " at " << b.offset);
      REQUIRE(e.has_value());
      CHECK(e->offset() == b.offset);
      CHECK_THAT(e->what(), Catch::Contains("unsupported codec 1"));
    }
  }
}

TEST_CASE("damaged zstd blocks give TraceFormatError at the block's offset", "[trace][codec]") {
  TempDir dir;
  // Two groups so the damaged block (the second DMA block) is not at the first block's offset. Its 700 events
  // have some strided entries but fewer than 700, so its decoded size is neither the least nor the most.
  TraceWriter w(dir / "good.ldmtrace", header());
  w.write_dma(0, chunk_of(extreme_events(1, 50, {})));
  w.write_markers(0, some_markers(2, 3));
  w.write_dma(3, chunk_of(realistic_events(3, 700)));
  w.write_markers(3, some_markers(4, 2));
  w.finish();
  const auto good = read_bytes(dir / "good.ldmtrace");
  const auto expected = read_contents(dir / "good.ldmtrace");
  const auto target = dma_blocks(good).at(1);
  REQUIRE(target.codec == 1);
  REQUIRE(target.count == 700);
  const std::size_t frame_at = target.payload_at() + 8;
  const auto frame_bytes = static_cast<std::size_t>(target.payload) - 8;
  const auto decoded = get_le<std::uint64_t>(good, target.payload_at());
  const std::uint64_t least = kEventBytes * 700 + 4;
  const std::uint64_t most = least + kStridedBytes * 700;
  REQUIRE(decoded > least);
  REQUIRE(decoded + kStridedBytes <= most);
  INFO("frame of " << frame_bytes << " bytes for 700 events, decoded size " << decoded);

  const auto bad_path = dir / "bad.ldmtrace";
  // Writes `bad`, reads it, and checks the error is at the target block and mentions `needle`.
  const auto expect_block_error = [&](const Bytes& bad, const std::string& needle) {
    write_bytes(bad_path, bad);
    const auto e = read_error(bad_path);
    INFO(message_of(e));
    REQUIRE(e.has_value());
    CHECK(e->offset() == target.offset);
    CHECK_THAT(e->what(), Catch::Contains(needle) && Catch::Contains("at byte " + std::to_string(target.offset)) &&
                              Catch::Contains("bad.ldmtrace"));
  };
  // A file with the frame replaced by `frame` (payload size adjusted).
  const auto with_frame = [&](const Bytes& frame) {
    Bytes bad(good.begin(), good.begin() + diff(frame_at));
    bad.insert(bad.end(), frame.begin(), frame.end());
    bad.insert(bad.end(), good.begin() + diff(frame_at + frame_bytes), good.end());
    put_le<std::uint64_t>(bad, target.offset + 12, 8 + frame.size());
    return bad;
  };
  const Bytes frame(good.begin() + diff(frame_at), good.begin() + diff(frame_at + frame_bytes));

  SECTION("every single-byte change in the frame is detected or harmless") {
    // The zstd frame has a checksum: a change is either reported at the block, or (a bit the decoder does not
    // interpret) reads back the very same events. It is never misread.
    std::size_t detected = 0;
    for (std::size_t i = 0; i < frame_bytes; ++i) {
      for (const unsigned x : {0x01u, 0x80u, 0xffu}) {
        auto bad = good;
        bad[frame_at + i] = static_cast<unsigned char>(bad[frame_at + i] ^ x);
        write_bytes(bad_path, bad);
        std::optional<TraceFormatError> e;
        Contents back;
        try {
          back = read_contents(bad_path);
        } catch (const TraceFormatError& err) {
          e = err;
        }
        INFO("frame byte " << i << " ^ " << x << ": " << message_of(e));
        if (e) {
          ++detected;
          CHECK(e->offset() == target.offset);
          CHECK_THAT(e->what(),
                     Catch::Contains("corrupt compressed DMA block") || Catch::Contains("corrupt DMA block"));
        } else {
          CHECK(back == expected);
        }
      }
    }
    // zstd does not read every bit of a frame (18 of 14199 changes went unnoticed here, all with the same
    // events read back), so only "almost all" is expected to be reported.
    INFO(detected << " of " << 3 * frame_bytes << " changes detected");
    CHECK(detected * 100 >= 3 * frame_bytes * 99);
  }
  SECTION("a damaged checksum is reported by zstd") {
    auto bad = good;
    bad[frame_at + frame_bytes - 1] ^= 0x10;  // the frame ends with its 4-byte checksum
    expect_block_error(bad, "zstd: ");
  }
  SECTION("a decoded size too small, too large or huge is impossible for the event count") {
    for (const std::uint64_t size : {std::uint64_t{0}, least - 1, most + 1, std::uint64_t{1} << 40,
                                     std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max()}) {
      INFO("decoded size " << size);
      auto bad = good;
      put_le<std::uint64_t>(bad, target.payload_at(), size);
      expect_block_error(bad, "decoded size " + std::to_string(size) + " is impossible for 700 events");
    }
  }
  SECTION("a plausible decoded size that the frame does not declare") {
    for (const std::uint64_t size : {decoded - kStridedBytes, decoded + kStridedBytes, least, most}) {
      INFO("decoded size " << size);
      auto bad = good;
      put_le<std::uint64_t>(bad, target.payload_at(), size);
      expect_block_error(bad, "does not declare the block's decoded size");
    }
  }
  SECTION("an event count that does not match the frame") {
    for (const std::uint32_t count : {699u, 701u, 0u}) {
      INFO("count " << count);
      auto bad = good;
      put_le<std::uint32_t>(bad, target.offset + 20, count);
      expect_block_error(bad, "corrupt ");
    }
  }
  SECTION("a truncated frame") {
    for (const std::size_t keep :
         {frame_bytes - 1, frame_bytes - 4, frame_bytes / 2, std::size_t{13}, std::size_t{4}, std::size_t{0}}) {
      INFO("frame cut to " << keep << " of " << frame_bytes << " bytes");
      expect_block_error(with_frame(Bytes(frame.begin(), frame.begin() + diff(keep))), "corrupt compressed DMA block");
    }
  }
  SECTION("a payload too short for the decoded size") {
    for (const std::size_t keep : {std::size_t{0}, std::size_t{7}}) {
      Bytes bad(good.begin(), good.begin() + diff(target.payload_at() + keep));
      bad.insert(bad.end(), good.begin() + diff(frame_at + frame_bytes), good.end());
      put_le<std::uint64_t>(bad, target.offset + 12, keep);
      expect_block_error(bad, "hold no decoded size");
    }
  }
  SECTION("trailing bytes after the frame") {
    auto longer = frame;
    longer.insert(longer.end(), 16, 0);
    expect_block_error(with_frame(longer), "corrupt compressed DMA block");
  }
  SECTION("a payload larger than 700 events can need") {
    // Larger than any zstd frame of the most 700 events can decode to, padded after a valid frame.
    auto longer = frame;
    longer.resize(static_cast<std::size_t>(2 * most + 1024), 0);
    expect_block_error(with_frame(longer), "payload bytes are more than 700 events can need");
  }
  SECTION("a payload size beyond the file") {
    auto bad = good;
    put_le<std::uint64_t>(bad, target.offset + 12, std::uint64_t{1} << 62);
    expect_block_error(bad, "truncated block");
  }
}

TEST_CASE("randomly corrupted zstd trace files give TraceFormatError or a valid read", "[trace][codec]") {
  TempDir dir;
  TraceRecorder g0(0, true);
  for (const auto& e : realistic_events(11, 300)) g0.record(e);
  for (const auto& m : some_markers(12, 4)) g0.mark(m);
  TraceRecorder g1(2, true);
  for (const auto& e : extreme_events(13, 200, {})) g1.record(e);
  for (const auto& m : some_markers(14, 3)) g1.mark(m);
  const std::vector<const TraceRecorder*> groups{&g0, &g1};
  const auto full = dir / "full.ldmtrace";
  ldmsim::write_trace(full, header(), groups);
  const auto bytes = read_bytes(full);
  const auto blocks = dma_blocks(bytes);
  REQUIRE(blocks.size() == 2);
  REQUIRE(blocks[0].codec == 1);
  const auto bad = dir / "bad.ldmtrace";
  std::mt19937_64 rng(20240917);
  std::size_t errors = 0;
  std::size_t in_frames = 0;
  for (int trial = 0; trial < 600; ++trial) {
    auto copy = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Half the trials hit the DMA payloads (decoded size and frame), the rest anywhere.
      std::size_t pos = rng() % copy.size();
      if (trial % 2 == 0) {
        const auto& b = blocks[rng() % blocks.size()];
        pos = b.payload_at() + rng() % b.payload;
        ++in_frames;
      }
      copy[pos] = trial % 3 == 0 ? 0xff : static_cast<unsigned char>(rng());
      if (trial % 5 == 0 && pos + 4 <= copy.size()) std::fill_n(copy.begin() + diff(pos), 4, 0xff);
    }
    write_bytes(bad, copy);
    std::string what;
    bool format_error = false;
    try {
      const auto groups_back = TraceReader::read_all(bad);
      for (const auto& g : groups_back) g.for_each_dma([](const DmaEvent&) {});
    } catch (const TraceFormatError& e) {
      format_error = true;
      what = e.what();
      CHECK(e.offset() <= copy.size());
    } catch (const std::exception& e) {
      FAIL("trial " << trial << ": not a TraceFormatError: " << e.what());
    }
    INFO("trial " << trial << ": " << what);
    if (format_error) ++errors;
  }
  INFO(errors << " of 600 corrupted files rejected");
  CHECK(in_frames > 0);
  CHECK(errors > 300);
}
