// The `ldmsim` command-line tool, run as a user runs it (the built binary through popen): subcommands, exit
// codes, the demo's outputs, and a trapped fault that still leaves stats.json and the trace behind.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/sim/arch.hpp"
#include "ldmsim/trace/file.hpp"
#include "tools/cli_support.hpp"

#ifdef LDMSIM_CLI

namespace fs = std::filesystem;
using Catch::Contains;
using namespace ldmsim::testing;

namespace {

nlohmann::json read_json(const fs::path& file) {
  return nlohmann::json::parse(read_file(file));
}

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream(file) << text;
}

/// The tiny preset's resolved tree with one value replaced (`pointer` is a JSON pointer).
std::string tiny_with(const std::string& pointer, const nlohmann::json& value) {
  nlohmann::json tree = ldmsim::Arch::preset("tiny").to_json();
  tree[nlohmann::json::json_pointer(pointer)] = value;
  return tree.dump(2);
}

}  // namespace

TEST_CASE("ldmsim --version prints the tool version", "[cli]") {
  const CliResult r = run_cli("--version");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Catch::StartsWith("ldmsim ") && Contains("."));
}

TEST_CASE("ldmsim arch list names every preset with a one-line summary", "[cli]") {
  const CliResult r = run_cli("arch list");
  REQUIRE(r.code == 0);
  for (const char* name : {"sw26010 ", "sw26010pro ", "tiny "}) CHECK_THAT(r.output, Contains(name));
  CHECK_THAT(r.output, Contains("4 core groups x 8x8 cores, 64 KiB ldm, 1.45 GHz"));
  CHECK_THAT(r.output, Contains("6 core groups x 8x8 cores, 256 KiB ldm, 2.25 GHz"));
  CHECK_THAT(r.output, Contains("1 core group x 2x2 cores, 16 KiB ldm"));
}

TEST_CASE("ldmsim arch show prints the resolved tree, loadable again", "[cli]") {
  for (const std::string name : {"sw26010", "sw26010pro", "tiny"}) {
    const CliResult r = run_cli("arch show " + name, /*stdout_only=*/true);
    REQUIRE(r.code == 0);
    const nlohmann::json tree = nlohmann::json::parse(r.output);
    CHECK(ldmsim::Arch::from_json(tree) == ldmsim::Arch::preset(name));
  }
  SECTION("a file works like a preset") {
    ScratchDir dir("show-file");
    write_file(dir.path / "mine.json", tiny_with("/name", "mine"));
    const CliResult r = run_cli("arch show " + dir.str("mine.json"), true);
    REQUIRE(r.code == 0);
    CHECK(ldmsim::Arch::from_json(nlohmann::json::parse(r.output)).name == "mine");
  }
}

TEST_CASE("ldmsim arch show of a bad file exits 2 naming the file and the JSON path", "[cli]") {
  ScratchDir dir("show-bad");
  SECTION("a timing-model parameter (validated by the model)") {
    write_file(dir.path / "bad.json", tiny_with("/dma/timing", {{"model", "fcfs-bandwidth"}, {"bytes_per_cycle", 0}}));
    const CliResult r = run_cli("arch show " + dir.str("bad.json"));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("bad.json") && Contains("dma.timing.bytes_per_cycle"));
  }
  SECTION("an unknown timing-model parameter") {
    write_file(dir.path / "bad.json", tiny_with("/dma/timing", {{"model", "ideal"}, {"latency", 3}}));
    const CliResult r = run_cli("arch show " + dir.str("bad.json"));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("dma.timing.latency"));
  }
  SECTION("a machine value") {
    write_file(dir.path / "bad.json", tiny_with("/core_groups/cores/rows", 0));
    const CliResult r = run_cli("arch show " + dir.str("bad.json"));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("core_groups.cores.rows"));
  }
  SECTION("no such preset or file") {
    const CliResult r = run_cli("arch show " + dir.str("missing.json"));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("missing.json"));
  }
}

TEST_CASE("ldmsim rejects bad usage with exit code 2", "[cli]") {
  CHECK(run_cli("").code == 2);
  CHECK(run_cli("frobnicate").code == 2);
  CHECK(run_cli("run --no-such-option").code == 2);
  CHECK(run_cli("arch").code == 2);
  CHECK(run_cli("run --threads -1").code == 2);
  const CliResult workload = run_cli("run no-such-workload.json");
  CHECK(workload.code == 2);
  CHECK_THAT(workload.output, Contains("no-such-workload.json"));
}

TEST_CASE("ldmsim run runs the verified demo and writes stats.json and a trace", "[cli][demo]") {
  ScratchDir dir("demo");
  const CliResult r = run_cli("run --arch tiny --out " + dir.str("out"));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("results verified ok"));
  for (const char* kernel : {"scale", "row-sum", "bcast-mul", "center"}) CHECK_THAT(r.output, Contains(kernel));

  const nlohmann::json stats = read_json(dir.path / "out" / "stats.json");
  CHECK(stats["verified"] == true);
  CHECK(stats["fault"].is_null());
  CHECK(stats["arch"] == "tiny");
  REQUIRE(stats["kernels"].size() == 4);
  std::uint64_t requests = 0;
  std::uint64_t cycles = 0;
  for (const auto& k : stats["kernels"]) {
    CHECK(k["status"] == "ok");
    CHECK(k["cycles"].get<std::uint64_t>() > 0);
    requests += k["dma_requests"].get<std::uint64_t>();
    cycles += k["cycles"].get<std::uint64_t>();
  }
  CHECK(requests == stats["dma_requests"].get<std::uint64_t>());
  CHECK(cycles == stats["cycles"].get<std::uint64_t>());  // one group: kernel clocks add up

  ldmsim::TraceReader reader(dir.path / "out" / "trace.ldmtrace");
  CHECK(reader.header()["fault"].is_null());
  CHECK(reader.header()["arch"]["name"] == "tiny");
  ldmsim::TraceBlock block;
  while (reader.next(block)) {
  }
  CHECK(reader.totals().dma_events == requests);
}

TEST_CASE("ldmsim run --trace and --no-trace choose where the trace goes", "[cli][demo]") {
  ScratchDir dir("trace-path");
  REQUIRE(run_cli("run --arch tiny --out " + dir.str("a") + " --trace " + dir.str("elsewhere/t.ldmtrace")).code == 0);
  CHECK(fs::exists(dir.path / "elsewhere" / "t.ldmtrace"));
  CHECK_FALSE(fs::exists(dir.path / "a" / "trace.ldmtrace"));
  REQUIRE(run_cli("run --arch tiny --no-trace --out " + dir.str("b")).code == 0);
  CHECK(fs::exists(dir.path / "b" / "stats.json"));
  CHECK_FALSE(fs::exists(dir.path / "b" / "trace.ldmtrace"));
  CHECK(run_cli("run --arch tiny --no-trace --trace x.ldmtrace").code == 2);
}

TEST_CASE("the demo on the default arch is identical with 1 and 2 host threads", "[cli][demo][determinism]") {
  ScratchDir dir("threads");
  REQUIRE(run_cli("run --threads 1 --out " + dir.str("t1")).code == 0);
  const CliResult r = run_cli("run --threads 2 --out " + dir.str("t2"));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("sw26010") && Contains("results verified ok"));
  CHECK(read_json(dir.path / "t1" / "stats.json") == read_json(dir.path / "t2" / "stats.json"));
  const std::string trace1 = read_file(dir.path / "t1" / "trace.ldmtrace");
  CHECK(trace1.size() > 1000);
  CHECK(trace1 == read_file(dir.path / "t2" / "trace.ldmtrace"));
}

TEST_CASE("a trapped fault exits 3 with its diagnostic and keeps stats.json and the trace", "[cli][fault]") {
  ScratchDir dir("fault");
  const CliResult r = run_cli("run --arch tiny --demo-fault --out " + dir.str("out"));
  CHECK(r.code == 3);
  CHECK_THAT(r.output, Contains("trap dma-misaligned: cg 0 core 1 in kernel 'scale'"));
  CHECK_THAT(r.output, Contains("length = 2046") && Contains("hint:"));

  const nlohmann::json stats = read_json(dir.path / "out" / "stats.json");
  CHECK(stats["verified"] == false);
  CHECK(stats["fault"]["kind"] == "dma-misaligned");
  CHECK(stats["fault"]["core"] == 1);
  REQUIRE(stats["kernels"].size() == 1);
  CHECK(stats["kernels"][0]["status"] == "fault");

  const auto path = dir.path / "out" / "trace.ldmtrace";
  ldmsim::TraceReader reader(path);
  const nlohmann::json& fault = reader.header()["fault"];
  REQUIRE(fault.is_object());
  CHECK(fault["kind"] == "dma-misaligned");
  CHECK(fault["cg"] == 0);
  CHECK(fault["core"] == 1);
  CHECK(fault["kernel"] == "scale");
  CHECK(fault.contains("cycle"));
  CHECK_THAT(fault["message"].get<std::string>(), Contains("length = 2046"));
  bool trapped_event = false;
  bool fault_marker = false;
  for (const auto& group : ldmsim::TraceReader::read_all(path)) {
    group.for_each_dma([&](const ldmsim::DmaEvent& e) { trapped_event |= e.status == ldmsim::DmaStatus::kTrapped; });
    for (const auto& m : group.markers()) fault_marker |= m.kind == ldmsim::MarkerKind::kFault;
  }
  CHECK(trapped_event);
  CHECK(fault_marker);

  // The fault is the demo's: with a workload the flag would do nothing, so it is refused.
  const CliResult workload = run_cli("run " + std::string(LDMSIM_SOURCE_DIR) +
                                     "/examples/relu6_block.json --demo-fault --out " + dir.str("workload"));
  CHECK(workload.code == 2);
  CHECK_THAT(workload.output, Contains("--demo-fault changes the built-in demo: give no workload"));
}

TEST_CASE("under --lint the demo fault becomes two recorded warnings and the run succeeds", "[cli][fault]") {
  ScratchDir dir("lint");
  const CliResult r = run_cli("run --arch tiny --demo-fault --lint -q --out " + dir.str("out"));
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("lint warnings: 2"));
  const nlohmann::json stats = read_json(dir.path / "out" / "stats.json");
  CHECK(stats["lint_warnings"] == 2);
  // Grouped by site (kernel, call, first bad field), each listing every bad field of its first request.
  REQUIRE(stats["lint"].size() == 2);
  CHECK(stats["lint"][0]["field"] == "length");
  CHECK(stats["lint"][1]["field"] == "main address");
  CHECK(stats["lint"][1]["count"] == 1);
  CHECK_THAT(stats["lint"][1]["message"].get<std::string>(), Contains("; also length = 2 (0x2)"));
  CHECK_THAT(r.output, Contains("lint (1 time): kernel scale, core group 0, core 1"));
  CHECK(stats["alignment_policy"] == "lint");
  CHECK(stats["verified"] == true);
}

#else
TEST_CASE("ldmsim CLI tests need the ldmsim_cli target (LDMSIM_BUILD_TOOLS=ON)", "[cli][!mayfail]") {
  WARN("LDMSIM_CLI is not defined; the CLI tests are skipped");
}
#endif
