// read_event_table: every field of every event unpacked as written, events given the launch they were issued in,
// launches merged over core groups, and bad files refused by name.
#include "ldmsim/trace_analysis/event_table.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ldmsim/sim/fault.hpp"
#include "trace_tools_support.hpp"

using ldmsim::DmaEvent;
using ldmsim::DmaOp;
using ldmsim::EventRecord;
using ldmsim::MarkerKind;
using ldmsim::TraceRecorder;
using trace_tools_test::TempDir;

namespace {

void check_record(const EventRecord& r, const DmaEvent& e, int cg) {
  CHECK(r.issue == e.issue);
  CHECK(r.start == e.start);
  CHECK(r.end == e.end);
  CHECK(r.main == e.main);
  CHECK(r.ldm == e.ldm);
  CHECK(r.bytes == e.length);
  CHECK(r.bsize == e.bsize);
  CHECK(r.stride == e.stride);
  CHECK(r.core == e.core);
  CHECK(r.cg == cg);
  CHECK(r.op == static_cast<std::uint8_t>(e.op));
  CHECK(r.mode == static_cast<std::uint8_t>(e.mode));
  CHECK(r.status == static_cast<std::uint8_t>(e.status));
}

void write(const std::filesystem::path& file, std::vector<TraceRecorder>& groups, ldmsim::TraceCodec codec) {
  std::vector<const TraceRecorder*> ptrs;
  for (const auto& g : groups) ptrs.push_back(&g);
  ldmsim::write_trace(file, trace_tools_test::header(1000), ptrs, codec);
}

}  // namespace

TEST_CASE("read_event_table unpacks every field of every event, in both codecs", "[trace]") {
  const auto codec = GENERATE(ldmsim::TraceCodec::kRaw, ldmsim::TraceCodec::kZstd);
  TempDir dir;
  std::vector<TraceRecorder> groups;
  groups.emplace_back(0, true);
  groups.emplace_back(5, true);
  std::vector<std::vector<DmaEvent>> written(2);
  // More than one block's worth in group 0, with extreme values and strided requests sprinkled in.
  for (std::uint32_t i = 0; i < 70000; ++i) {
    DmaEvent e = trace_tools_test::event(static_cast<std::uint16_t>(i % 64), i % 3 == 0 ? DmaOp::kPut : DmaOp::kGet,
                                         4 * (i % 1000 + 1), 10ull * i, 10ull * i + i % 7, 10ull * i + 100 + i % 13);
    e.main = (i == 5) ? ldmsim::DmaChunk::kMainLimit - 4 : 0x100000 + 64ull * i;
    e.ldm = (i == 6) ? ldmsim::DmaChunk::kLdmLimit - 4 : 8 * (i % 100);
    e.mode = static_cast<ldmsim::DmaMode>(i % 3);
    e.status = static_cast<ldmsim::DmaStatus>(i % 11 == 0 ? 1 : i % 13 == 0 ? 2 : 0);
    if (i % 17 == 0) {
      e.bsize = 32;
      e.stride = 4 * (i % 50);
    }
    groups[0].record(e);
    written[0].push_back(e);
  }
  DmaEvent last = trace_tools_test::event(65535, DmaOp::kPut, 8, 1ull << 40, (1ull << 40) + 5, (1ull << 40) + 9);
  groups[1].record(last);
  written[1].push_back(last);
  const auto file = dir / "t.ldmtrace";
  write(file, groups, codec);

  const ldmsim::EventTable table = ldmsim::read_event_table(file);
  REQUIRE(table.events.size() == 70001);
  CHECK(table.totals.dma_events == 70001);
  CHECK(table.header["run"]["workload"] == "unit");
  for (std::size_t i = 0; i < written[0].size(); ++i) check_record(table.events.data()[i], written[0][i], 0);
  check_record(table.events.data()[70000], last, 5);
  CHECK(table.events.data()[0].kernel == -1);  // no launch markers at all

  std::uint64_t asked = 0;
  CHECK_THROWS_WITH(ldmsim::read_event_table(file, true,
                                             [&](std::uint64_t bytes) {
                                               asked = bytes;
                                               throw ldmsim::ConfigError("too big");
                                             }),
                    "too big");
  CHECK(asked == 70001 * sizeof(EventRecord));
  const ldmsim::EventTable no_events = ldmsim::read_event_table(file, false);
  CHECK(no_events.events.size() == 0);
  CHECK(no_events.totals.dma_events == 70001);
}

TEST_CASE("read_event_table gives each event the launch it was issued in, merged over core groups", "[trace]") {
  TempDir dir;
  std::vector<TraceRecorder> groups;
  groups.emplace_back(0, true);
  groups.emplace_back(1, true);
  const auto get = [](std::uint16_t core, ldmsim::Cycle issue) {
    return trace_tools_test::event(core, DmaOp::kGet, 4, issue, issue, issue + 1);
  };
  // cg 0: one event before any launch, two in "a" [100, 200), one in "b" from 300, one in a second "a" from 400.
  for (const ldmsim::Cycle issue : {50u, 100u, 150u, 300u, 450u}) groups[0].record(get(0, issue));
  groups[0].mark({MarkerKind::kLaunchBegin, 100, -1, 0, "a"});
  groups[0].mark({MarkerKind::kLaunchEnd, 200, -1, 0, "a"});
  groups[0].mark({MarkerKind::kLaunchBegin, 300, -1, 0, "b"});
  groups[0].mark({MarkerKind::kLaunchEnd, 380, -1, 0, "b"});
  groups[0].mark({MarkerKind::kLaunchBegin, 400, -1, 0, "a"});  // trapped: no launch end
  // cg 1 keeps its own time: its "a" (the same launch as cg 0's first) begins at 110, then "c" alone.
  for (const ldmsim::Cycle issue : {120u, 260u}) groups[1].record(get(1, issue));
  groups[1].mark({MarkerKind::kLaunchBegin, 110, -1, 0, "a"});
  groups[1].mark({MarkerKind::kLaunchEnd, 250, -1, 0, "a"});
  groups[1].mark({MarkerKind::kLaunchBegin, 250, -1, 0, "c"});
  groups[1].mark({MarkerKind::kLaunchEnd, 280, -1, 0, "c"});
  const auto file = dir / "t.ldmtrace";
  write(file, groups, ldmsim::TraceCodec::kZstd);

  const ldmsim::EventTable table = ldmsim::read_event_table(file);
  // Ordered by begin: a (both groups), c, b, the second a.
  REQUIRE(table.kernels.size() == 4);
  CHECK(table.kernels[0].name == "a");
  CHECK(table.kernels[0].begin == 100);  // the earlier of its groups' begins
  CHECK(table.kernels[0].end == 250);    // the later of their ends
  CHECK(table.kernels[0].groups == 2);
  CHECK(table.kernels[1].name == "c");
  CHECK(table.kernels[1].end == 280);
  CHECK(table.kernels[2].name == "b");
  CHECK(table.kernels[2].end == 380);
  CHECK(table.kernels[2].groups == 1);
  CHECK(table.kernels[3].name == "a");
  CHECK(table.kernels[3].begin == 400);
  CHECK(table.kernels[3].end == 400);  // no end marker: its begin
  std::vector<std::int32_t> kernels;
  for (std::size_t i = 0; i < table.events.size(); ++i) kernels.push_back(table.events.data()[i].kernel);
  CHECK(kernels == std::vector<std::int32_t>{-1, 0, 0, 2, 3, 0, 1});
  REQUIRE(table.markers.size() == 9);
  CHECK(table.markers[0].cg == 0);
  CHECK(table.markers[8].cg == 1);
  CHECK(table.markers[8].marker.text == "c");
}

TEST_CASE("read_event_table refuses a FIFO, a missing file and a truncated trace by name", "[trace]") {
  TempDir dir;
  const auto fifo = dir / "fifo.ldmtrace";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(ldmsim::read_event_table(fifo), Catch::Contains("fifo.ldmtrace") && Catch::Contains("FIFO"));
  CHECK_THROWS_AS(ldmsim::read_event_table(dir / "missing.ldmtrace"), ldmsim::ConfigError);

  const auto whole = dir / "whole.ldmtrace";
  trace_tools_test::write_sample(whole);
  const std::string bytes = trace_tools_test::read_text(whole);
  const auto cut = dir / "cut.ldmtrace";
  std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 10));
  CHECK_THROWS_AS(ldmsim::read_event_table(cut), ldmsim::TraceFormatError);
  CHECK_THROWS_WITH(ldmsim::read_event_table(cut), Catch::Contains("cut.ldmtrace"));
}

TEST_CASE("EventBuffer holds its size and hands its memory over", "[trace]") {
  ldmsim::EventBuffer empty(0);
  CHECK(empty.size() == 0);
  CHECK(empty.data() == nullptr);
  ldmsim::EventBuffer buffer(200000);
  REQUIRE(buffer.size() == 200000);
  for (std::uint64_t i = 0; i < buffer.size(); ++i) buffer.data()[i].issue = i;
  ldmsim::EventBuffer moved = std::move(buffer);
  CHECK(moved.size() == 200000);
  CHECK(buffer.size() == 0);
  EventRecord* records = moved.release();
  CHECK(moved.size() == 0);
  CHECK(moved.data() == nullptr);
  CHECK(records[199999].issue == 199999);
  std::free(records);
}
