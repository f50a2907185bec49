// Tests for DMA trace recording (columnar packing, chunks, markers, memory) and the binary trace file format
// (round trip, determinism, and robustness against truncated or corrupted files).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"

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
using ldmsim::TraceFormatError;
using ldmsim::TraceReader;
using ldmsim::TraceRecorder;
using ldmsim::TraceWriter;

namespace {

constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();

/// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("ldmsim-trace-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::vector<unsigned char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::vector<unsigned char>& bytes, std::size_t n) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(n));
}

DmaEvent make_event(std::mt19937_64& rng, std::uint16_t core) {
  DmaEvent e;
  e.issue = rng() % 1'000'000'000;
  e.start = e.issue + rng() % 1000;
  e.end = e.start + 1 + rng() % 100'000;
  e.main = (rng() % (std::uint64_t{1} << 40)) & ~std::uint64_t{3};
  e.ldm = static_cast<std::uint32_t>(rng() % (256 * 1024)) & ~3u;
  e.length = static_cast<std::uint32_t>(4 + (rng() % 4096) * 4);
  if (rng() % 4 == 0) {
    e.bsize = 64;
    e.stride = static_cast<std::uint32_t>((rng() % 16) * 4);
  }
  e.core = core;
  e.op = rng() % 2 ? DmaOp::kPut : DmaOp::kGet;
  e.mode = static_cast<DmaMode>(rng() % 3);
  e.status = static_cast<DmaStatus>(rng() % 3);
  return e;
}

TraceRecorder make_group(int cg, std::size_t events, std::size_t markers, std::uint64_t seed,
                         std::vector<DmaEvent>* out_events = nullptr) {
  std::mt19937_64 rng(seed);
  TraceRecorder rec(cg, true);
  for (std::size_t i = 0; i < events; ++i) {
    const auto e = make_event(rng, static_cast<std::uint16_t>(i % 64));
    rec.record(e);
    if (out_events) out_events->push_back(e);
  }
  for (std::size_t i = 0; i < markers; ++i) {
    Marker m;
    m.kind = static_cast<MarkerKind>(i % 6);
    m.cycle = rng();
    m.core = i % 3 == 0 ? -1 : static_cast<std::int32_t>(i);
    m.value = static_cast<std::uint32_t>(rng());
    m.text = i % 2 ? "kernel_" + std::to_string(i) + std::string(i % 40, 'x') : "";
    rec.mark(m);
  }
  return rec;
}

std::vector<DmaEvent> events_of(const TraceRecorder& rec) {
  std::vector<DmaEvent> v;
  rec.for_each_dma([&](const DmaEvent& e) { v.push_back(e); });
  return v;
}

nlohmann::json sample_header() {
  return {{"arch", {{"name", "sw26010"}, {"core_groups", {{"count", 4}}}, {"ldm_bytes", 65536}}},
          {"run", {{"tool_version", "0.1.0"}, {"workload", "scale.json"}, {"cycles", 123456}, {"seconds", 8.2e-5}}},
          {"fault", nullptr}};
}

enum class Outcome { kOk, kFormatError, kOther };

Outcome try_read(const fs::path& p, std::string& what) {
  try {
    auto groups = TraceReader::read_all(p);
    for (const auto& g : groups) g.for_each_dma([](const DmaEvent&) {});
    return Outcome::kOk;
  } catch (const TraceFormatError& e) {
    what = e.what();
    return Outcome::kFormatError;
  } catch (const std::exception& e) {
    what = e.what();
    return Outcome::kOther;
  }
}

}  // namespace

TEST_CASE("DmaChunk packs and unpacks every field at its extremes", "[trace]") {
  DmaEvent hi;
  hi.issue = std::numeric_limits<std::uint64_t>::max() - 2 * kU32;
  hi.start = hi.issue + kU32;
  hi.end = hi.start + kU32;
  hi.main = (std::uint64_t{1} << 48) - 1;
  hi.ldm = (1u << 24) - 1;
  hi.length = std::numeric_limits<std::uint32_t>::max();
  hi.bsize = std::numeric_limits<std::uint32_t>::max();
  hi.stride = std::numeric_limits<std::uint32_t>::max();
  hi.core = std::numeric_limits<std::uint16_t>::max();
  hi.op = DmaOp::kPut;
  hi.mode = DmaMode::kRow;
  hi.status = DmaStatus::kLintWarning;

  const DmaEvent lo{};  // all zero: get, PE, ok, contiguous

  DmaEvent strided_zero_bsize;  // stride without bsize must survive too
  strided_zero_bsize.stride = 8;

  DmaChunk chunk;
  chunk.push(hi);
  chunk.push(lo);
  chunk.push(strided_zero_bsize);
  for (auto op : {DmaOp::kGet, DmaOp::kPut})
    for (auto mode : {DmaMode::kPe, DmaMode::kBcast, DmaMode::kRow})
      for (auto status : {DmaStatus::kOk, DmaStatus::kTrapped, DmaStatus::kLintWarning}) {
        DmaEvent e = hi;
        e.op = op;
        e.mode = mode;
        e.status = status;
        chunk.push(e);
      }
  REQUIRE(chunk.size() == 3 + 18);
  CHECK(chunk.at(0) == hi);
  CHECK(chunk.at(1) == lo);
  CHECK(chunk.at(2) == strided_zero_bsize);
  std::size_t i = 3;
  for (auto op : {DmaOp::kGet, DmaOp::kPut})
    for (auto mode : {DmaMode::kPe, DmaMode::kBcast, DmaMode::kRow})
      for (auto status : {DmaStatus::kOk, DmaStatus::kTrapped, DmaStatus::kLintWarning}) {
        const auto e = chunk.at(i++);
        CHECK(e.op == op);
        CHECK(e.mode == mode);
        CHECK(e.status == status);
        CHECK(e.ldm == hi.ldm);
        CHECK(e.main == hi.main);
        CHECK(e.core == hi.core);
      }
  CHECK(chunk.main48_core16[0] == std::numeric_limits<std::uint64_t>::max());
  CHECK(chunk.ldm24_flags8[0] == ((1u << 24) - 1 | 1u << 24 | 2u << 25 | 2u << 27));
  CHECK(chunk.strided.size() == 2 + 18);
  CHECK(chunk.payload_bytes() == chunk.size() * 32 + chunk.strided.size() * 12);
}

TEST_CASE("values outside the packed fields throw std::length_error", "[trace]") {
  DmaChunk chunk;
  const DmaEvent ok{};
  auto expect_throw = [&](DmaEvent e, const std::string& needle) {
    try {
      chunk.push(e);
      FAIL("no exception for " << needle);
    } catch (const std::length_error& err) {
      CHECK_THAT(err.what(), Catch::Contains(needle));
    }
  };
  DmaEvent e = ok;
  e.main = std::uint64_t{1} << 48;
  expect_throw(e, "main address");
  e = ok;
  e.ldm = 1u << 24;
  expect_throw(e, "ldm address");
  e = ok;
  e.start = kU32 + 1;
  e.end = e.start;
  expect_throw(e, "start - issue");
  e = ok;
  e.issue = 10;
  e.start = 5;
  e.end = 20;
  expect_throw(e, "before issue");
  e = ok;
  e.end = kU32 + 1;
  expect_throw(e, "end - start");
  e = ok;
  e.start = 10;
  e.end = 9;
  e.issue = 0;
  expect_throw(e, "before start");
  CHECK(chunk.size() == 0);  // nothing half-pushed
  CHECK(chunk.strided.empty());

  TraceRecorder rec(0, true);
  e = ok;
  e.main = std::uint64_t{1} << 60;
  CHECK_THROWS_AS(rec.record(e), std::length_error);
  CHECK(rec.dma_count() == 0);
  CHECK(rec.memory_chunks().empty());
}

TEST_CASE("TraceRecorder rolls over to a new chunk at 4096 events", "[trace]") {
  std::mt19937_64 rng(7);
  TraceRecorder rec(3, true);
  std::vector<DmaEvent> expected;
  for (std::size_t i = 0; i < DmaChunk::kCapacity; ++i) {
    expected.push_back(make_event(rng, 1));
    rec.record(expected.back());
  }
  REQUIRE(rec.memory_chunks().size() == 1);
  CHECK(rec.memory_chunks()[0].full());
  CHECK(rec.memory_chunks()[0].issue.capacity() == DmaChunk::kCapacity);
  expected.push_back(make_event(rng, 2));
  rec.record(expected.back());
  REQUIRE(rec.memory_chunks().size() == 2);
  CHECK(rec.memory_chunks()[1].size() == 1);
  CHECK(rec.memory_chunks()[1].issue.capacity() >= DmaChunk::kCapacity);
  CHECK(rec.dma_count() == DmaChunk::kCapacity + 1);
  CHECK(events_of(rec) == expected);

  rec.clear();
  CHECK(rec.dma_count() == 0);
  CHECK(rec.memory_chunks().empty());
  CHECK(rec.markers().empty());

  TraceRecorder off(0, false);
  off.record(expected[0]);
  off.mark(Marker{});
  CHECK(off.dma_count() == 0);
  CHECK(off.markers().empty());
  CHECK(off.memory_bytes() == 0);
}

TEST_CASE("markers keep their text", "[trace]") {
  TraceRecorder rec(1, true);
  const std::vector<Marker> markers = {
      {MarkerKind::kLaunchBegin, 0, -1, 0, "scale_kernel"},
      {MarkerKind::kBarrier, 100, 3, 2, ""},
      {MarkerKind::kFault, 250, 7, 4, std::string("ldm overflow\0with nul", 21)},
      {MarkerKind::kLintWarning, 251, 7, 0, "dma length 6 not a multiple of 4 \xE2\x9C\x97"},
      {MarkerKind::kLaunchEnd, 300, -1, 0, std::string(5000, 'y')},
  };
  for (const auto& m : markers) rec.mark(m);
  CHECK(rec.markers() == markers);
  CHECK(rec.memory_bytes() >= 5000);
}

TEST_CASE("trace memory stays near 32 bytes per DMA event", "[trace]") {
  const auto rec = make_group(0, 100'000, 0, 11);
  REQUIRE(rec.dma_count() == 100'000);
  const double per_event = static_cast<double>(rec.memory_bytes()) / 100'000.0;
  INFO("bytes per event: " << per_event);
  // Columns are 32 bytes; the strided side table (12 bytes for ~1 in 4 events here, plus vector growth slack)
  // and the last chunk's slack add a little.
  CHECK(per_event <= 32.0 + 8.0);
  const auto plain = [] {
    TraceRecorder r(0, true);
    DmaEvent e;
    for (std::uint64_t i = 0; i < 100'000; ++i) {
      e.issue = i;
      e.start = i;
      e.end = i + 1;
      r.record(e);
    }
    return r;
  }();
  CHECK(static_cast<double>(plain.memory_bytes()) / 100'000.0 <= 32.0 + 1.0);
}

TEST_CASE("trace files round-trip several groups", "[trace]") {
  TempDir dir;
  const auto header = sample_header();
  std::vector<std::vector<DmaEvent>> expected(4);
  std::vector<TraceRecorder> groups;
  groups.push_back(make_group(0, 5000, 7, 1, &expected[0]));   // two chunks
  groups.push_back(make_group(1, 0, 0, 2, &expected[1]));      // empty group
  groups.push_back(make_group(2, 12, 5000, 3, &expected[2]));  // markers split over two blocks
  groups.push_back(make_group(5, 4096, 1, 4, &expected[3]));   // exactly one full chunk, gap in cg numbers
  // Pass them out of order: the file is written in cg order anyway.
  const std::vector<const TraceRecorder*> ptrs = {&groups[3], &groups[1], &groups[0], &groups[2]};
  const auto path = dir / "run.ldmtrace";
  ldmsim::write_trace(path, header, ptrs);
  CHECK_FALSE(fs::exists(dir / "run.ldmtrace.tmp"));

  const auto back = TraceReader::read_all(path);
  REQUIRE(back.size() == 4);
  for (std::size_t g = 0; g < 4; ++g) {
    INFO("group " << g);
    CHECK(back[g].cg() == groups[g].cg());
    CHECK(back[g].dma_count() == groups[g].dma_count());
    CHECK(events_of(back[g]) == expected[g]);
    CHECK(back[g].markers() == groups[g].markers());
  }

  TraceReader reader(path);
  CHECK(reader.version() == ldmsim::kTraceFormatVersion);
  CHECK(reader.header() == header);
  TraceBlock block;
  std::vector<int> cgs;
  std::size_t dma_blocks = 0, marker_blocks = 0;
  while (reader.next(block)) {
    cgs.push_back(block.cg);
    (block.kind == TraceBlockKind::kDma ? dma_blocks : marker_blocks) += 1;
  }
  CHECK(std::is_sorted(cgs.begin(), cgs.end()));
  CHECK(dma_blocks == 2 + 0 + 1 + 1);
  CHECK(marker_blocks == 1 + 1 + 2 + 1);
  CHECK(reader.totals().dma_events == 5000 + 12 + 4096);
  CHECK(reader.totals().markers == 7 + 5000 + 1);
  CHECK(reader.totals().groups == 4);
  CHECK_FALSE(reader.next(block));  // stays at the end

  // Streaming through TraceWriter gives the same bytes as write_trace.
  const auto streamed = dir / "streamed.ldmtrace";
  {
    TraceWriter w(streamed, header);
    for (const auto& g : groups) w.write_group(g);
    w.finish();
  }
  CHECK(read_bytes(streamed) == read_bytes(path));
}

TEST_CASE("identical input gives byte-identical trace files", "[trace]") {
  TempDir dir;
  auto write = [&](const std::string& name) {
    std::vector<TraceRecorder> groups;
    for (int cg = 0; cg < 3; ++cg) groups.push_back(make_group(cg, 3000, 10, 100 + static_cast<unsigned>(cg)));
    std::vector<const TraceRecorder*> ptrs;
    for (auto it = groups.rbegin(); it != groups.rend(); ++it) ptrs.push_back(&*it);
    if (name == "b") std::swap(ptrs[0], ptrs[1]);
    ldmsim::write_trace(dir / name, sample_header(), ptrs);
    return read_bytes(dir / name);
  };
  const auto a = write("a");
  const auto b = write("b");
  REQUIRE(!a.empty());
  CHECK(a == b);
  CHECK(std::string(a.begin(), a.begin() + 8) == "LDMTRACE");
}

TEST_CASE("trace writer rejects misuse and reports I/O failures", "[trace]") {
  TempDir dir;
  const auto g0 = make_group(0, 10, 1, 1);
  const auto g1 = make_group(1, 10, 1, 2);
  {
    TraceWriter w(dir / "order.ldmtrace", sample_header());
    w.write_group(g1);
    CHECK_THROWS_AS(w.write_group(g0), std::invalid_argument);
    CHECK_THROWS_AS(w.write_group(g1), std::invalid_argument);
  }
  CHECK_FALSE(fs::exists(dir / "order.ldmtrace.tmp"));  // abandoned writer cleans up
  CHECK_FALSE(fs::exists(dir / "order.ldmtrace"));

  const std::vector<const TraceRecorder*> dup = {&g0, &g0};
  CHECK_THROWS_AS(ldmsim::write_trace(dir / "dup.ldmtrace", sample_header(), dup), std::invalid_argument);
  CHECK_THROWS_AS(TraceWriter(dir / "x", nlohmann::json::array()), std::invalid_argument);

  const auto missing = dir / "no" / "such" / "dir" / "t.ldmtrace";
  const std::vector<const TraceRecorder*> one = {&g0};
  try {
    ldmsim::write_trace(missing, sample_header(), one);
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains(missing.string()));
  }
  CHECK_THROWS_AS(TraceReader(dir / "absent.ldmtrace"), std::runtime_error);
}

TEST_CASE("truncated trace files give TraceFormatError at every offset", "[trace]") {
  TempDir dir;
  const auto g0 = make_group(0, 6, 3, 5);
  const auto g1 = make_group(1, 3, 2, 6);
  const std::vector<const TraceRecorder*> ptrs = {&g0, &g1};
  const auto full = dir / "full.ldmtrace";
  ldmsim::write_trace(full, {{"workload", "tiny"}, {"fault", nullptr}}, ptrs);
  const auto bytes = read_bytes(full);
  REQUIRE(bytes.size() > 200);
  const auto cut = dir / "trace.ldmtrace";
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    write_bytes(cut, bytes, n);
    std::string what;
    const auto outcome = try_read(cut, what);
    INFO("truncated to " << n << " of " << bytes.size() << " bytes: " << what);
    REQUIRE(outcome == Outcome::kFormatError);
    CHECK_THAT(what, Catch::Contains("trace.ldmtrace") && Catch::Contains("at byte"));
  }
  write_bytes(cut, bytes, bytes.size());
  std::string what;
  CHECK(try_read(cut, what) == Outcome::kOk);

  // The message names the block and the missing bytes.
  write_bytes(cut, bytes, bytes.size() - 40);
  CHECK(try_read(cut, what) == Outcome::kFormatError);
  CHECK_THAT(what, Catch::Contains("truncated"));

  // Trailing garbage after the end block is an error too.
  auto longer = bytes;
  longer.push_back(0);
  write_bytes(cut, longer, longer.size());
  CHECK(try_read(cut, what) == Outcome::kFormatError);
  CHECK_THAT(what, Catch::Contains("trailing"));
}

TEST_CASE("corrupted trace files give TraceFormatError or a valid read, never a crash", "[trace]") {
  TempDir dir;
  const auto g0 = make_group(0, 40, 4, 8);
  const auto g1 = make_group(2, 20, 3, 9);
  const std::vector<const TraceRecorder*> ptrs = {&g0, &g1};
  const auto full = dir / "full.ldmtrace";
  ldmsim::write_trace(full, sample_header(), ptrs);
  const auto bytes = read_bytes(full);
  const auto bad = dir / "bad.ldmtrace";
  std::mt19937_64 rng(20240601);
  std::size_t errors = 0;
  for (int trial = 0; trial < 400; ++trial) {
    auto copy = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const auto pos = rng() % copy.size();
      // Mostly random bytes; sometimes 0xff runs that turn counts and sizes huge.
      copy[pos] = trial % 3 == 0 ? 0xff : static_cast<unsigned char>(rng());
      if (trial % 5 == 0 && pos + 4 <= copy.size())
        std::fill_n(copy.begin() + static_cast<std::ptrdiff_t>(pos), 4, 0xff);
    }
    write_bytes(bad, copy, copy.size());
    std::string what;
    const auto outcome = try_read(bad, what);
    INFO("trial " << trial << ": " << what);
    REQUIRE(outcome != Outcome::kOther);
    if (outcome == Outcome::kFormatError) ++errors;
  }
  CHECK(errors > 0);

  // Specific corruptions with specific messages.
  auto copy = bytes;
  copy[0] = 'X';
  write_bytes(bad, copy, copy.size());
  std::string what;
  CHECK(try_read(bad, what) == Outcome::kFormatError);
  CHECK_THAT(what, Catch::Contains("bad magic"));
  copy = bytes;
  copy[8] = 3;  // version 3 (newer than this build)
  write_bytes(bad, copy, copy.size());
  CHECK(try_read(bad, what) == Outcome::kFormatError);
  CHECK_THAT(what, Catch::Contains("version 3") && Catch::Contains("versions 1 to 2"));
  copy[8] = 0;
  write_bytes(bad, copy, copy.size());
  CHECK(try_read(bad, what) == Outcome::kFormatError);
  CHECK_THAT(what, Catch::Contains("version 0"));
}
