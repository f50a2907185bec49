// Tests for the streaming trace summary: per-core counts, busy time from overlapping spans, histogram, slowest
// requests, faults / lint markers, bandwidth bins, stats.json merging and the JSON / text renderings.
#include <catch2/catch.hpp>
#include <numeric>

#include "ldmsim/trace_analysis/summary.hpp"
#include "trace_tools_support.hpp"

using namespace trace_tools_test;
using ldmsim::BandwidthBins;
using ldmsim::SizeHistogram;

TEST_CASE("summary counts requests and bytes per group and per core", "[trace-summary]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  const auto s = ldmsim::summarize_trace(dir / "t.ldmtrace", {.top = 2});
  CHECK(s.arch == "test2x2");
  CHECK(s.cycles == 1000);
  REQUIRE(s.groups.size() == 2);
  CHECK(s.requests() == 4);
  CHECK(s.bytes() == 100 + 4096 + 8 + 64);
  const auto& g0 = s.groups[0];
  REQUIRE(g0.cores.size() == 4);
  CHECK(g0.cores[0].get_requests == 2);
  CHECK(g0.cores[0].get_bytes == 4196);
  CHECK(g0.cores[3].put_requests == 1);
  CHECK(g0.cores[3].row == 1);
  CHECK(g0.cores[3].col == 1);
  CHECK(g0.launches == 1);
  CHECK(g0.barriers == 1);
  CHECK(g0.cycles == 1000);
  // [0,10) and [5,105) overlap: union is 105 cycles, not 110.
  CHECK(g0.cores[0].dma_busy_cycles == 105);
  CHECK(g0.cores[3].dma_busy_cycles == 800);
  CHECK(s.groups[1].cg == 1);
  CHECK(s.groups[1].cycles == 400);
}

TEST_CASE("summary histogram, slowest requests and issues", "[trace-summary]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  const auto s = ldmsim::summarize_trace(dir / "t.ldmtrace", {.top = 2});
  CHECK(s.sizes.count[SizeHistogram::bucket(64)] == 2);    // 64 and 100 share the bucket
  CHECK(s.sizes.count[SizeHistogram::bucket(4096)] == 1);  // [4096, 8192)
  CHECK(SizeHistogram::bucket(8) == 4);
  REQUIRE(s.slowest.size() == 2);
  CHECK(s.slowest[0].event.length == 8);  // 800 cycles issue to end
  CHECK(s.slowest[1].event.length == 4096);
  CHECK(s.faults == 0);
  CHECK(s.lint_markers == 1);
  REQUIRE(s.issues.size() == 1);
  CHECK(s.issues[0].cg == 1);
  CHECK(s.issues[0].core == 1);
  CHECK(s.issues[0].text.find("multiple of 4") != std::string::npos);
}

TEST_CASE("a trace of a trapped run says it is complete up to the fault", "[trace-summary]") {
  TempDir dir;
  const nlohmann::json fault = {{"kind", "dma-misaligned"}, {"cg", 0}, {"core", 3}, {"cycle", 1000}, {"kernel", "k"},
                                {"message", "length 6"}};
  write_sample(dir / "t.ldmtrace", fault);
  const auto s = ldmsim::summarize_trace(dir / "t.ldmtrace");
  const auto j = ldmsim::to_json(s);
  CHECK(j["complete"] == "complete up to the fault");
  CHECK(j["fault"]["kind"] == "dma-misaligned");
  CHECK_THAT(ldmsim::format_summary(s), Catch::Contains("TRAPPED") && Catch::Contains("complete up to the fault"));
}

TEST_CASE("bandwidth bins keep every byte when they widen", "[trace-summary]") {
  BandwidthBins bins(10, 1);
  bins.add(0, 4, 400);
  bins.add(5, 5, 7);        // zero-length span: all in one bin
  bins.add(90, 1000, 910);  // forces the width to double several times
  const double total = std::accumulate(bins.bytes().begin(), bins.bytes().end(), 0.0);
  CHECK(total == Approx(1317.0));
  CHECK(bins.width() == 128);
  CHECK(bins.bytes()[0] == Approx(407.0 + 910.0 * 38.0 / 910.0));
}

TEST_CASE("summary JSON has per-core fields and merges stats.json", "[trace-summary]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  auto s = ldmsim::summarize_trace(dir / "t.ldmtrace");
  auto j = ldmsim::to_json(s);
  CHECK(j["groups"][0]["cores"][0]["dma_busy_fraction"].get<double>() == Approx(0.105));
  CHECK(j["groups"][0]["cores"][0]["busy_fraction"].is_null());
  CHECK(j["groups"][0]["bandwidth_over_time"].size() == 100);

  nlohmann::json stats = {{"cycles", 999}, {"groups", nlohmann::json::array()}};
  CHECK_FALSE(ldmsim::apply_run_stats(s, stats));  // another run
  stats["cycles"] = 1000;
  nlohmann::json cores = nlohmann::json::array();
  for (int c = 0; c < 4; ++c)
    cores.push_back({{"busy_cycles", 250}, {"dma_wait_cycles", 100}, {"barrier_wait_cycles", 50}});
  stats["groups"] = {{{"cycles", 1000}, {"cores", cores}}, {{"cycles", 400}, {"cores", cores}}};
  REQUIRE(ldmsim::apply_run_stats(s, stats));
  CHECK(s.groups[0].cores[2].busy_fraction == Approx(0.25));
  CHECK(s.groups[0].cores[2].waiting_fraction == Approx(0.15));
  CHECK(s.groups[1].cores[0].busy_fraction == Approx(0.625));
  CHECK(ldmsim::to_json(s)["run_stats"] == true);
}

TEST_CASE("summary of an empty trace", "[trace-summary]") {
  TempDir dir;
  ldmsim::TraceRecorder g(0, true);
  const ldmsim::TraceRecorder* p = &g;
  ldmsim::write_trace(dir / "e.ldmtrace", header(0), std::span<const ldmsim::TraceRecorder* const>(&p, 1));
  const auto s = ldmsim::summarize_trace(dir / "e.ldmtrace");
  CHECK(s.requests() == 0);
  CHECK(s.slowest.empty());
  CHECK_NOTHROW(ldmsim::format_summary(s));
  CHECK(ldmsim::to_json(s)["bandwidth_bytes_per_second"] == 0.0);
}

TEST_CASE("hostile traces cannot inflate per-group or per-core tables", "[trace-summary]") {
  TempDir dir;
  // A core id the format can carry (16 bits) but no arch has: the summary refuses it instead of sizing a table
  // of 65536 cores for each group.
  {
    std::vector<ldmsim::TraceRecorder> groups;
    for (int cg = 0; cg < 4; ++cg) {
      groups.emplace_back(cg, true);
      groups.back().record(event(65535, ldmsim::DmaOp::kGet, 64, 0, 1, 2));
    }
    std::vector<const ldmsim::TraceRecorder*> ptrs;
    for (const auto& g : groups) ptrs.push_back(&g);
    ldmsim::write_trace(dir / "cores.ldmtrace", header(10), ptrs);
    CHECK_THROWS_AS(ldmsim::summarize_trace(dir / "cores.ldmtrace"), ldmsim::TraceFormatError);
    CHECK_THROWS_WITH(ldmsim::summarize_trace(dir / "cores.ldmtrace"), Catch::Contains("at most 1024 cores"));
  }
  // A core group beyond any arch's 64: every reader refuses the block.
  {
    ldmsim::TraceRecorder group(200000, true);
    group.record(event(0, ldmsim::DmaOp::kGet, 64, 0, 1, 2));
    const ldmsim::TraceRecorder* ptr = &group;
    ldmsim::write_trace(dir / "groups.ldmtrace", header(10), std::span(&ptr, 1));
    CHECK_THROWS_WITH(ldmsim::summarize_trace(dir / "groups.ldmtrace"),
                      Catch::Contains("core group 200000 out of range"));
  }
}

TEST_CASE("a header's checking reports are summarised, fields of the wrong type read as defaults", "[trace-summary]") {
  TempDir dir;
  ldmsim::TraceRecorder g(0, true);
  const ldmsim::TraceRecorder* p = &g;
  nlohmann::json h = header(100);
  h["check"] = nlohmann::json::array(
      {{{"kind", "dma-race"}, {"kernel", "k"}, {"cg", 0}, {"core", 2}, {"cycle", 40}, {"count", 3}, {"message", "m"}},
       {{"kind", 7}, {"cg", "zero"}, {"core", -1e300}, {"count", "many"}},
       "not an object"});
  ldmsim::write_trace(dir / "c.ldmtrace", h, std::span<const ldmsim::TraceRecorder* const>(&p, 1));
  const auto s = ldmsim::summarize_trace(dir / "c.ldmtrace");
  REQUIRE(s.checked);
  REQUIRE(s.check.size() == 2);
  CHECK(s.check[0].count == 3);
  CHECK(s.check[1].kind == "?");
  CHECK(s.check[1].cg == 0);
  CHECK(s.check[1].count == 1);
  CHECK_THAT(ldmsim::format_summary(s),
             Catch::Contains("check: 2 reports (4 occurrences)") &&
                 Catch::Contains("check dma-race (3 times): kernel k, core group 0, core 2"));
  CHECK(ldmsim::to_json(s)["check"].size() == 2);
  // No "check" in the header: checking was off, and the summary does not pretend it found nothing.
  ldmsim::write_trace(dir / "o.ldmtrace", header(100), std::span<const ldmsim::TraceRecorder* const>(&p, 1));
  const auto off = ldmsim::summarize_trace(dir / "o.ldmtrace");
  CHECK_FALSE(off.checked);
  CHECK_FALSE(ldmsim::to_json(off).contains("check"));
  CHECK(ldmsim::format_summary(off).find("check:") == std::string::npos);
}
