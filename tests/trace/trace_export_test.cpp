// Tests for the trace exports (Chrome Trace Event JSON, CSV), the filter (writes a valid smaller trace) and the
// diff (counts and the first diverging event).
#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "ldmsim/trace_analysis/diff.hpp"
#include "ldmsim/trace_analysis/export.hpp"
#include "ldmsim/trace_analysis/filter.hpp"
#include "trace_tools_support.hpp"

using namespace trace_tools_test;

TEST_CASE("chrome export names groups and cores and keeps overlapping requests visible", "[trace-export]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  std::ostringstream out;
  const auto counts = ldmsim::export_chrome_json(dir / "t.ldmtrace", out, 10);
  CHECK(counts.requests == 4);
  const auto j = nlohmann::json::parse(out.str());
  REQUIRE(j["traceEvents"].is_array());
  // Timestamps are microseconds, as the format says; a displayTimeUnit of "ns" made Perfetto read them as ns.
  CHECK_FALSE(j.contains("displayTimeUnit"));
  CHECK(j["otherData"]["time_unit"] == "microseconds of simulated time");
  std::set<std::string> processes, threads;
  std::vector<nlohmann::json> dma, counters, instants, launches;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X" && e["cat"] == "dma") dma.push_back(e);
    if (e["ph"] == "X" && e["cat"] == "launch") launches.push_back(e);
    if (e["ph"] == "C") counters.push_back(e);
    if (e["ph"] == "i") instants.push_back(e);
  }
  CHECK(processes == std::set<std::string>{"cg 0", "cg 1"});
  CHECK(threads.count("core 0,0") == 1);
  CHECK(threads.count("core 1,1") == 1);
  CHECK(threads.count("core 0,0 dma 1") == 1);  // the overlapping second request of core 0
  REQUIRE(dma.size() == 4);
  // The two requests of core 0 overlap in time, so they sit on different threads.
  CHECK(dma[0]["tid"] != dma[1]["tid"]);
  // Microseconds of simulated time at 1 GHz: cycle 200 -> 0.2 us, 800 cycles -> 0.8 us.
  CHECK(dma[2]["ts"].get<double>() == Approx(0.2));
  CHECK(dma[2]["dur"].get<double>() == Approx(0.8));
  CHECK(dma[2]["args"]["op"] == "put");
  CHECK(launches.size() == 2);
  CHECK(instants.size() == 2);  // barrier and lint warning
  CHECK_FALSE(counters.empty());
  for (const auto& c : counters) CHECK(c["name"] == "DMA bandwidth");
}

TEST_CASE("csv export has a header and one row per request", "[trace-export]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  std::ostringstream out;
  CHECK(ldmsim::export_csv(dir / "t.ldmtrace", out).requests == 4);
  std::istringstream in(out.str());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("cg,core,row,col,op,", 0) == 0);
  CHECK(lines[3].rfind("0,3,1,1,put,PE,ok,8,", 0) == 0);
}

TEST_CASE("filter writes a valid trace with only the matching requests", "[trace-filter]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  ldmsim::TraceFilter f;
  f.cg = 0;
  f.op = ldmsim::DmaOp::kGet;
  f.min_bytes = 1000;
  const auto totals = ldmsim::filter_trace(dir / "t.ldmtrace", dir / "f.ldmtrace", f);
  CHECK(totals.dma_events == 1);
  CHECK(totals.groups == 1);
  const auto groups = ldmsim::TraceReader::read_all(dir / "f.ldmtrace");
  REQUIRE(groups.size() == 1);
  REQUIRE(groups[0].dma_count() == 1);
  CHECK(groups[0].memory_chunks()[0].at(0).length == 4096);
  ldmsim::TraceReader r(dir / "f.ldmtrace");
  CHECK(r.header()["filter"]["min_bytes"] == 1000);

  SECTION("time window and core, markers kept by time") {
    ldmsim::TraceFilter w;
    w.from = 100;
    w.to = 250;
    ldmsim::filter_trace(dir / "t.ldmtrace", dir / "w.ldmtrace", w);
    const auto g = ldmsim::TraceReader::read_all(dir / "w.ldmtrace");
    REQUIRE(g.size() == 2);
    CHECK(g[0].dma_count() == 2);  // [5,105) ends after 100, [200,1000) starts before 250
    CHECK(g[1].dma_count() == 0);  // empty group still present
    std::size_t barriers = 0;
    for (const auto& m : g[0].markers()) barriers += m.kind == ldmsim::MarkerKind::kBarrier;
    CHECK(barriers == 1);
  }
}

TEST_CASE("diff finds identical traces and the first diverging event", "[trace-diff]") {
  TempDir dir;
  write_sample(dir / "a.ldmtrace");
  write_sample(dir / "b.ldmtrace");
  const auto same = ldmsim::diff_traces(dir / "a.ldmtrace", dir / "b.ldmtrace");
  CHECK(same.identical);
  CHECK(same.per_cg.at(0).first.requests == 3);
  CHECK(same.per_op.at("get").second.bytes == 100 + 4096 + 64);

  auto groups = sample_groups();
  groups[1] = ldmsim::TraceRecorder(1, true);
  groups[1].record(event(1, ldmsim::DmaOp::kGet, 128, 10, 10, 30));
  std::vector<const ldmsim::TraceRecorder*> ptrs{&groups[0], &groups[1]};
  ldmsim::write_trace(dir / "c.ldmtrace", header(1200), ptrs);
  const auto d = ldmsim::diff_traces(dir / "a.ldmtrace", dir / "c.ldmtrace");
  CHECK_FALSE(d.identical);
  CHECK(d.divergence_index == 6);  // 3 requests + 3 markers of cg 0 agree
  CHECK_THAT(d.divergence, Catch::Contains("128 B"));
  CHECK(d.cycles_b == 1200);
  CHECK(d.per_cg.at(1).second.bytes == 128);
  CHECK(d.to_json()["identical"] == false);
}
