// `ldmsim trace` and `ldmsim report` run as a user runs them: on traces of the built-in demo (clean and trapped),
// exit codes (2 for malformed traces, 1 for differing diffs), and the HTML report rendered in headless chromium.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"
#include "tools/cli_support.hpp"

#ifdef LDMSIM_CLI

namespace fs = std::filesystem;
using Catch::Contains;
using namespace ldmsim::testing;

namespace {

using Result = CliResult;
using Scratch = ScratchDir;
Result cli(const std::string& args, bool stdout_only = false) {
  return run_cli(args, stdout_only);
}

/// The demo on the tiny arch, once per test program (clean run in "ok", trapped run in "trap").
const Scratch& demo_runs() {
  static const Scratch dir("runs");
  static const bool done = [] {
    REQUIRE(cli("run --arch tiny -q --out " + dir.str("ok")).code == 0);
    REQUIRE(cli("run --arch tiny -q --demo-fault --out " + dir.str("trap")).code == 3);
    return true;
  }();
  (void)done;
  return dir;
}

}  // namespace

TEST_CASE("trace summary of a demo run: text and JSON, with stats.json merged", "[cli][trace]") {
  const auto& runs = demo_runs();
  const Result text = cli("trace summary " + runs.str("ok/trace.ldmtrace"));
  REQUIRE(text.code == 0);
  CHECK_THAT(text.output, Contains("arch tiny") && Contains("trace: complete") && Contains("slowest"));
  const Result json = cli("trace summary --json --top 3 " + runs.str("ok"), true);
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.output);
  CHECK(j["requests"].get<std::uint64_t>() > 0);
  CHECK(j["run_stats"] == true);
  CHECK(j["slowest"].size() == 3);
  CHECK(j["groups"][0]["cores"].size() == 4);
  CHECK(j["groups"][0]["cores"][0]["busy_fraction"].is_number());
  CHECK(j["run"]["workload"] == "demo");
}

TEST_CASE("trace summary of a trapped run says it is complete up to the fault", "[cli][trace]") {
  const auto& runs = demo_runs();
  const Result r = cli("trace summary " + runs.str("trap/trace.ldmtrace"));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("TRAPPED") && Contains("complete up to the fault") && Contains("fault dma-misaligned"));
}

TEST_CASE("trace summary --json of a fault marker whose text is not UTF-8 replaces the bytes",
          "[cli][trace][hostile]") {
  // The format allows any bytes in a marker's text; JSON needs UTF-8.
  Scratch dir("marker-bytes");
  ldmsim::TraceRecorder group(0, true);
  group.mark({ldmsim::MarkerKind::kLaunchBegin, 0, -1, 0, "k"});
  group.mark({ldmsim::MarkerKind::kFault, 5, 0, 0, std::string("bad \xFF\xFE byte")});
  group.mark({ldmsim::MarkerKind::kLaunchEnd, 10, -1, 0, "k"});
  const nlohmann::json header = {
      {"arch",
       {{"name", "t"}, {"clock_hz", 1e9}, {"core_groups", {{"count", 1}, {"cores", {{"rows", 1}, {"cols", 2}}}}}}},
      {"cycles", 10},
      {"seconds", 1e-8},
      {"fault", nullptr},
      {"run", {{"workload", "unit"}}}};
  const ldmsim::TraceRecorder* groups[] = {&group};
  ldmsim::write_trace(dir.path / "t.ldmtrace", header, groups);
  const Result r = cli("trace summary --json " + dir.str("t.ldmtrace"), true);
  INFO(r.output);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK_THAT(j.dump(), Contains("bad \xEF\xBF\xBD"));  // U+FFFD in place of the bad bytes
}

TEST_CASE("trace export writes chrome JSON and CSV", "[cli][trace]") {
  const auto& runs = demo_runs();
  Scratch dir("export");
  const std::string trace = runs.str("ok/trace.ldmtrace");
  const auto summary = nlohmann::json::parse(cli("trace summary --json " + trace, true).output);
  const auto requests = summary["requests"].get<std::size_t>();
  REQUIRE(cli("trace export " + trace + " --format chrome -o " + dir.str("t.json")).code == 0);
  const auto j = nlohmann::json::parse(read_file(dir.path / "t.json"));
  std::size_t dma = 0;
  for (const auto& e : j["traceEvents"]) dma += e["ph"] == "X" && e["cat"] == "dma";
  CHECK(dma == requests);
  REQUIRE(cli("trace export " + trace + " --format csv -o " + dir.str("t.csv")).code == 0);
  const std::string csv = read_file(dir.path / "t.csv");
  CHECK(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')) == requests + 1);
  CHECK(cli("trace export " + trace + " --format xml -o " + dir.str("t.xml")).code == 2);
}

TEST_CASE("trace filter writes a valid trace, diff compares runs", "[cli][trace]") {
  const auto& runs = demo_runs();
  Scratch dir("filter");
  const std::string trace = runs.str("ok/trace.ldmtrace");
  REQUIRE(cli("trace filter " + trace + " --op get --core 1 -o " + dir.str("f.ldmtrace")).code == 0);
  const auto j = nlohmann::json::parse(cli("trace summary --json " + dir.str("f.ldmtrace"), true).output);
  CHECK(j["requests"].get<std::uint64_t>() > 0);
  CHECK(j["groups"][0]["put_bytes"] == 0);
  for (const auto& c : j["groups"][0]["cores"]) {
    if (c["core"] != 1) CHECK(c["requests"] == 0);
  }
  const Result same = cli("trace diff " + trace + " " + trace);
  CHECK(same.code == 0);
  CHECK_THAT(same.output, Contains("identical"));
  const Result differ = cli("trace diff " + trace + " " + dir.str("f.ldmtrace"));
  CHECK(differ.code == 1);
  CHECK_THAT(differ.output, Contains("first divergence"));
}

TEST_CASE("every trace subcommand exits 2 on a truncated trace, naming the byte offset", "[cli][trace]") {
  const auto& runs = demo_runs();
  Scratch dir("bad");
  const std::string good = read_file(runs.path / "ok/trace.ldmtrace");
  const fs::path bad = dir.path / "bad.ldmtrace";
  std::ofstream(bad, std::ios::binary) << good.substr(0, good.size() - 40);
  const std::string b = bad.string();
  for (const std::string& args : {"trace summary " + b, "trace export " + b + " -o " + dir.str("x.json"),
                                  "trace export " + b + " --format csv -o " + dir.str("x.csv"),
                                  "trace filter " + b + " -o " + dir.str("x.ldmtrace"), "trace diff " + b + " " + b,
                                  "report " + b + " -o " + dir.str("x.html")}) {
    INFO(args);
    const Result r = cli(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("at byte"));
  }
  CHECK(cli("trace summary " + dir.str("missing.ldmtrace")).code == 2);
}

TEST_CASE("report renders in headless chromium without script errors", "[cli][report]") {
  const auto& runs = demo_runs();
  Scratch dir("report");
  REQUIRE(cli("report " + runs.str("trap") + " -o " + dir.str("r.html")).code == 0);
  const std::string html = read_file(dir.path / "r.html");
  CHECK_THAT(html, Contains("id=\"heatmap\""));
  CHECK(html.find("<script src") == std::string::npos);  // self-contained
  CHECK(html.find("<link") == std::string::npos);

  if (shell("command -v chromium >/dev/null 2>&1").code != 0) {
    shell("(apt-get install -y chromium || (apt-get update && apt-get install -y chromium)) >/dev/null 2>&1");
  }
  if (shell("command -v chromium >/dev/null 2>&1").code != 0) {
    WARN("chromium is not installed and could not be installed: skipping the headless rendering check");
    return;
  }
  const std::string profile = dir.str("profile");
  const std::string command =
      "chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
      "--disable-sync --no-first-run --user-data-dir='" +
      profile + "' --enable-logging=stderr --v=0 --dump-dom 'file://" + dir.str("r.html") + "' 2>'" +
      dir.str("log.txt") + "'";
  const Result r = shell(command);
  const std::string log = read_file(dir.path / "log.txt");
  INFO(log);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("id=\"report-rendered\""));
  CHECK_THAT(r.output, Contains("id=\"heatmap-cg0\"") && Contains("class=\"heat-cell\""));
  CHECK_THAT(r.output, Contains("id=\"bandwidth-chart\"") && Contains("id=\"histogram-chart\""));
  CHECK_THAT(r.output, Contains("id=\"summary-table\"") && Contains("id=\"fault-banner\""));
  CHECK(log.find("Uncaught") == std::string::npos);
}

TEST_CASE("trace export --format perfetto writes a native trace of a run at most 16 bytes per request",
          "[cli][trace][perfetto]") {
  const Scratch out("perfetto-export");
  REQUIRE(run_cli("run --arch sw26010 --out '" + out.str("run") + "'").code == 0);
  const Result r = run_cli("trace export '" + out.str("run") + "' --format perfetto -o '" + out.str("t.pftrace") + "'");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("12292 DMA requests"));  // the demo's requests on sw26010
  const auto bytes = fs::file_size(out.path / "t.pftrace");
  CHECK(bytes <= 16 * 12292);
  REQUIRE(run_cli("trace export '" + out.str("run") + "' -o '" + out.str("t.json") + "'").code == 0);
  CHECK(bytes * 10 < fs::file_size(out.path / "t.json"));  // the Chrome JSON spends 200+ bytes on a request
}

#endif  // LDMSIM_CLI
