// The rough edges of the CLI a new user meets first: mistyped commands get the nearest command, every usage error
// is prefixed, --help shows defaults, trace filter/diff take run directories, trace summary narrows big machines
// with --cg/--top, numbers print with units instead of exponents, and progress lines say how long the run has
// taken.
#include <catch2/catch.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "tools/cli_support.hpp"

#ifdef LDMSIM_CLI

using Catch::Contains;
using namespace ldmsim::testing;

namespace {

const std::string kCnnBlock = std::string(LDMSIM_SOURCE_DIR) + "/examples/cnn_block.json";

bool has_exponent(const std::string& text) {
  return std::regex_search(text, std::regex("[0-9]e[+-][0-9]"));
}

}  // namespace

TEST_CASE("a mistyped command is named with the nearest command, at any depth", "[cli][papercuts]") {
  const auto top = run_cli("rn examples");
  CHECK(top.code == 2);
  CHECK_THAT(top.output, Contains("ldmsim: error: unknown command 'rn'") && Contains("did you mean 'run'?"));
  const auto nested = run_cli("-v trace sumary some-dir");
  CHECK(nested.code == 2);
  CHECK_THAT(nested.output, Contains("unknown command 'trace sumary'") && Contains("did you mean 'summary'?") &&
                                Contains("ldmsim trace --help"));
  const auto far = run_cli("arch zzzzzz");
  CHECK(far.code == 2);
  CHECK_THAT(far.output, Contains("unknown command 'arch zzzzzz'") && Contains("commands of ldmsim arch: list, show"));
  CHECK_THAT(far.output, !Contains("did you mean"));
}

TEST_CASE("every usage error carries the ldmsim: error: prefix and exits 2", "[cli][papercuts]") {
  for (const char* args : {"run --threads abc", "run --no-such-option", "run --staging bad", "compare one-run",
                           "trace summary", "trace export x", "run --progress sometimes"}) {
    const auto r = run_cli(args);
    INFO(args << ": " << r.output);
    CHECK(r.code == 2);
    CHECK(r.output.rfind("ldmsim: error: ", 0) == 0);
  }
}

TEST_CASE("--help shows each option's default", "[cli][papercuts]") {
  const auto run = run_cli("run --help", true);
  REQUIRE(run.code == 0);
  CHECK_THAT(run.output, Contains("--out TEXT=ldmsim-out") && Contains("--fusion TEXT:{on,off}=on") &&
                             Contains("--progress TEXT:{auto,always,never}=auto"));
  CHECK_THAT(run.output, !Contains("=[]"));  // an empty list says nothing
  const auto summary = run_cli("trace summary --help", true);
  CHECK_THAT(summary.output, Contains("--top UINT=10") && Contains("--cg"));
  const auto report = run_cli("report --help", true);
  CHECK_THAT(report.output, Contains("=report.html"));
}

TEST_CASE("trace filter and diff take run directories, trace summary narrows with --cg and --top",
          "[cli][papercuts][trace]") {
  const ScratchDir out("papercuts-trace");
  REQUIRE(run_cli("run --arch sw26010 --out '" + out.str("a") + "'").code == 0);
  REQUIRE(run_cli("run --arch sw26010 --threads 1 --out '" + out.str("b") + "'").code == 0);
  const auto diff = run_cli("trace diff '" + out.str("a") + "' '" + out.str("b") + "'");
  INFO(diff.output);
  CHECK(diff.code == 0);
  CHECK_THAT(diff.output, Contains("identical"));
  const auto filter = run_cli("trace filter '" + out.str("a") + "' --cg 2 -o '" + out.str("cg2.ldmtrace") + "'");
  INFO(filter.output);
  CHECK(filter.code == 0);
  CHECK(std::filesystem::is_regular_file(out.path / "cg2.ldmtrace"));

  const auto count_core_rows = [](const std::string& text, const std::string& cg) {
    std::istringstream lines(text);
    int rows = 0, other = 0;
    bool in_table = false;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("per core:", 0) == 0) {
        in_table = true;
        continue;
      }
      if (in_table && (line.empty() || line.find("...") != std::string::npos || line.front() == '(')) break;
      if (!in_table) continue;
      std::istringstream fields(line);
      std::string group;
      fields >> group;
      (group == cg || cg.empty() ? rows : other) += 1;
    }
    return std::make_pair(rows, other);
  };
  const auto narrow = run_cli("trace summary '" + out.str("a") + "' --cg 1 --top 0", true);
  REQUIRE(narrow.code == 0);
  CHECK(count_core_rows(narrow.output, "1") == std::make_pair(64, 0));  // every core of group 1, no other group
  CHECK_THAT(narrow.output, Contains("are in core group 1"));
  const auto busiest = run_cli("trace summary '" + out.str("a") + "' --top 5", true);
  REQUIRE(busiest.code == 0);
  CHECK(count_core_rows(busiest.output, "").first == 5);
  CHECK_THAT(busiest.output, Contains("... 251 more cores"));
  const auto bad = run_cli("trace summary '" + out.str("a") + "' --cg 4");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.output, Contains("--cg 4: the trace has 4 core group(s)"));

  // Numbers with units, never exponents: the demo's and the summary's times and rates.
  const auto demo = run_cli("run --arch sw26010 --out '" + out.str("c") + "'", true);
  CHECK_THAT(demo.output, Contains(" us simulated at "));
  CHECK_FALSE(has_exponent(demo.output));
  CHECK_FALSE(has_exponent(busiest.output));
  CHECK_THAT(busiest.output, Contains("GB/s achieved"));
}

TEST_CASE("progress lines carry the host seconds since the run began", "[cli][papercuts]") {
  const ScratchDir out("papercuts-progress");
  const auto r = run_cli("run '" + kCnnBlock + "' --progress always --out '" + out.str("run") + "'");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(std::regex_search(r.output,
                          std::regex(R"(\[1/4 [0-9]+\.[0-9]s\] spatialbn#0\+relu#1 \(fused\): [0-9.]+ ns simulated)")));
  const auto quiet = run_cli("run '" + kCnnBlock + "' --progress never --out '" + out.str("run2") + "'");
  CHECK_THAT(quiet.output, !Contains("[1/4"));
}

#endif
