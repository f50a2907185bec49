// The ranks of an MPI run directory (rank_summary.hpp): each rank's totals from its header's mpi record, and the
// timeline of its MPI calls with their waiting parts, in either header layout, merged into at most
// kMaxTimelineBars bars.
#include "ldmsim/trace_analysis/rank_summary.hpp"

#include <catch2/catch.hpp>

#include "ldmsim/sim/fault.hpp"
#include "trace_tools_support.hpp"

using namespace trace_tools_test;
using ldmsim::Cycle;

namespace {

std::filesystem::path write_rank(const TempDir& dir, int rank, const nlohmann::json& mpi) {
  nlohmann::json h = header(1000);
  h["run"] = {{"program", "athread"}};
  if (!mpi.is_null()) h["mpi"] = mpi;
  const auto groups = sample_groups();
  std::vector<const ldmsim::TraceRecorder*> ptrs{&groups[0], &groups[1]};
  const auto file = dir / ("trace.rank" + std::to_string(rank) + ".ldmtrace");
  ldmsim::write_trace(file, h, ptrs);
  return file;
}

}  // namespace

TEST_CASE("a rank's MPI timeline holds its calls in time order with their waits", "[rank-summary]") {
  TempDir dir;
  const nlohmann::json now = {{"calls_made", 4},
                              {"mpi_cycles", 500},
                              {"wait_cycles", 230},
                              {"calls_columns", {"name", "begin", "end", "peer", "bytes", "wait_begin", "wait_end"}},
                              {"calls",
                               {{"MPI_Recv", 400, 600, 1, 64, 450, 600},
                                {"MPI_Send", 100, 150, 1, 64, 150, 150},  // no wait
                                {"MPI_Barrier", 700, 850, -1, 0, 700, 780},
                                {"MPI_Wait", 900, 950, -1, 0, 880, 990},  // a wait outside its call is clipped to it
                                {"not a call"},
                                {"MPI_Bcast", 10, 5, -1, 0, 5, 5}}}};  // ends before it begins: skipped
  // The first layout (no calls_columns, no waits) reads as calls without waits.
  const nlohmann::json before = {{"calls_made", 1}, {"calls", {{"MPI_Allreduce", 300, 380, -1, 8}}}};
  const auto files = std::vector{write_rank(dir, 0, now), write_rank(dir, 1, before)};
  const ldmsim::RankSummary s = ldmsim::summarize_ranks(files);
  REQUIRE(s.ranks.size() == 2);
  const auto& t = s.ranks[0].timeline;
  REQUIRE(t.size() == 4);
  CHECK((t[0].name == "MPI_Send" && t[0].begin == 100 && t[0].end == 150 && t[0].wait_begin == t[0].wait_end));
  CHECK((t[1].name == "MPI_Recv" && t[1].wait_begin == 450 && t[1].wait_end == 600));
  CHECK((t[2].name == "MPI_Barrier" && t[2].wait_begin == 700 && t[2].wait_end == 780));
  CHECK((t[3].name == "MPI_Wait" && t[3].wait_begin == 900 && t[3].wait_end == 950));
  for (const auto& c : t) CHECK(c.calls == 1);
  const auto& old = s.ranks[1].timeline;
  REQUIRE(old.size() == 1);
  CHECK((old[0].name == "MPI_Allreduce" && old[0].begin == 300 && old[0].end == 380));
  CHECK(old[0].wait_begin == old[0].wait_end);

  // The JSON the report draws: [name, begin, end, wait_begin, wait_end, calls] per bar.
  const nlohmann::json j = ldmsim::to_json(s);
  CHECK(j["timeline_columns"] == nlohmann::json({"name", "begin", "end", "wait_begin", "wait_end", "calls"}));
  CHECK(j["ranks"][0]["timeline"][1] == nlohmann::json({"MPI_Recv", 400, 600, 450, 600, 1}));
}

TEST_CASE("more calls than the timeline holds merge into bars that keep their span and total wait", "[rank-summary]") {
  TempDir dir;
  nlohmann::json calls = nlohmann::json::array();
  const std::size_t n = 2 * ldmsim::kMaxTimelineBars + 2;  // 3 calls a bar, the last one alone
  Cycle wait = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Cycle begin = 10 * i;
    const Cycle w = i % 2;  // odd calls wait 1 cycle at their end
    calls.push_back({i % 3 == 0 ? "MPI_Send" : "MPI_Recv", begin, begin + 5, 0, 4, begin + 5 - w, begin + 5});
    wait += w;
  }
  const nlohmann::json mpi = {{"calls_made", n},
                              {"calls_columns", {"name", "begin", "end", "peer", "bytes", "wait_begin", "wait_end"}},
                              {"calls", calls}};
  const ldmsim::RankSummary s = ldmsim::summarize_ranks({write_rank(dir, 0, mpi)});
  const auto& t = s.ranks[0].timeline;
  REQUIRE(t.size() <= ldmsim::kMaxTimelineBars);
  CHECK(t.front().begin == 0);
  CHECK(t.back().end == 10 * (n - 1) + 5);
  std::uint64_t listed = 0;
  Cycle waited = 0;
  for (const auto& bar : t) {
    listed += bar.calls;
    waited += bar.wait_end - bar.wait_begin;
    CHECK(bar.wait_end == bar.end);  // a merged bar's wait sits at its end
  }
  CHECK(listed == n);
  CHECK(waited == wait);
  CHECK(t[0].name == "3 calls");       // Send, Recv, Recv
  CHECK(t.back().name == "MPI_Send");  // the last call alone
}

TEST_CASE("a trace without an mpi record is not a rank's", "[rank-summary]") {
  TempDir dir;
  CHECK_THROWS_AS(ldmsim::summarize_ranks({write_rank(dir, 0, nullptr)}), ldmsim::ConfigError);
}
