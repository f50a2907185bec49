// `ldmsim run --check` (docs/checking.md): the operator library is the checker's first customer, so conv nets, an
// LSTM, matrix and normalisation workloads run under --check all with zero reports (stats.json's `check` is empty)
// and the same cycles as without; a bad check list is bad input.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"

using namespace ldmsim::testing;

namespace {

nlohmann::json stats_of(const ScratchDir& dir, const std::string& sub) {
  return nlohmann::json::parse(read_file(dir.path / sub / "stats.json"));
}

}  // namespace

TEST_CASE("ldmsim run --check all finds nothing in the operator library", "[cli][check]") {
  const std::string workload =
      GENERATE(as<std::string>{}, "examples/cnn_block.json", "examples/conv_block.json", "examples/relu6_block.json",
               "bench/workloads/lstm512x2.json", "bench/workloads/r50_conv3x3.json", "bench/workloads/r50_bn.json",
               "bench/workloads/mlp.json", "bench/workloads/chain10.json");
  const std::string arch = GENERATE(as<std::string>{}, "sw26010", "sw26010pro");
  CAPTURE(workload, arch);
  ScratchDir dir("check-clean");
  const std::string common = std::string(LDMSIM_SOURCE_DIR) + "/" + workload + " --arch " + arch + " --no-trace";
  const CliResult on = run_cli("run " + common + " --check all --out " + dir.str("on"));
  INFO(on.output);
  REQUIRE(on.code == 0);
  const CliResult off = run_cli("run " + common + " --out " + dir.str("off"));
  REQUIRE(off.code == 0);
  const nlohmann::json checked = stats_of(dir, "on");
  REQUIRE(checked.contains("check"));
  CHECK(checked["check"].empty());
  const nlohmann::json plain = stats_of(dir, "off");
  CHECK_FALSE(plain.contains("check"));
  CHECK(checked["cycles"] == plain["cycles"]);
}

TEST_CASE("ldmsim run --check with an unknown check is bad input", "[cli][check]") {
  ScratchDir dir("check-bad");
  const CliResult r =
      run_cli("run " + std::string(LDMSIM_SOURCE_DIR) + "/examples/relu6_block.json --check racse --out " + dir.str());
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("--check: 'racse' is not a check"));
}

TEST_CASE("ldmsim run --check on the built-in demo: no report, same cycles", "[cli][check]") {
  ScratchDir dir("check-demo");
  const CliResult on = run_cli("run --arch tiny --no-trace --check all --out " + dir.str("on"));
  INFO(on.output);
  REQUIRE(on.code == 0);
  REQUIRE(run_cli("run --arch tiny --no-trace --out " + dir.str("off")).code == 0);
  const nlohmann::json checked = stats_of(dir, "on");
  REQUIRE(checked.contains("check"));
  CHECK(checked["check"].empty());
  CHECK_FALSE(stats_of(dir, "off").contains("check"));
  CHECK(checked["cycles"] == stats_of(dir, "off")["cycles"]);
}

TEST_CASE("ldmsim run --check exits 4 when the run has a bug: the demo's put source changed in flight",
          "[cli][check]") {
  ScratchDir dir("check-demo-race");
  const CliResult r = run_cli("run --arch tiny --no-trace --demo-race --check races --out " + dir.str("on"));
  INFO(r.output);
  CHECK(r.code == 4);
  CHECK_THAT(r.output, Catch::Contains("results verified ok"));  // data moved at issue: the bug is latent
  CHECK_THAT(r.output, Catch::Contains("ldmsim: check put-source (1 time): kernel scale, core group 0, core 1"));
  CHECK_THAT(r.output, Catch::Contains("checking reported 1 site(s)"));
  const nlohmann::json stats = stats_of(dir, "on");
  REQUIRE(stats["check"].size() == 1);
  CHECK(stats["check"][0]["kind"] == "put-source");
  CHECK(stats["check"][0]["core"] == 1);
  // Without --check the same run succeeds; the aid is for the demo only.
  CHECK(run_cli("run --arch tiny --no-trace --demo-race --out " + dir.str("off")).code == 0);
  const CliResult workload =
      run_cli("run " + std::string(LDMSIM_SOURCE_DIR) + "/examples/relu6_block.json --demo-race --out " + dir.str("w"));
  CHECK(workload.code == 2);
  CHECK_THAT(workload.output, Catch::Contains("--demo-race changes the built-in demo"));
}

TEST_CASE("ldmsim run --check with several models reports per model, sequential and --concurrent", "[cli][check]") {
  const std::string schedule = GENERATE(as<std::string>{}, "", " --concurrent");
  CAPTURE(schedule);
  ScratchDir dir("check-models");
  const std::string examples = std::string(LDMSIM_SOURCE_DIR) + "/examples/";
  const CliResult r =
      run_cli("run " + examples + "relu6_block.json " + examples + "cnn_block.json --arch sw26010 --no-trace" +
              schedule + " --check all --out " + dir.str("out"));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json top = stats_of(dir, "out");
  REQUIRE(top["models"].size() == 2);
  for (const auto& model : top["models"]) {
    REQUIRE(model.contains("check"));
    CHECK(model["check"].empty());
    const nlohmann::json own = stats_of(dir, "out/" + model["name"].get<std::string>());
    REQUIRE(own.contains("check"));
    CHECK(own["check"].empty());
  }
}

TEST_CASE("the node trace of models run together under --check says what checking found", "[cli][check]") {
  ScratchDir dir("check-models-trace");
  const std::string examples = std::string(LDMSIM_SOURCE_DIR) + "/examples/";
  const CliResult r = run_cli("run " + examples + "relu6_block.json " + examples + "cnn_block.json --arch sw26010" +
                              " --concurrent --check all --out " + dir.str("out"));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const CliResult summary = run_cli("trace summary " + dir.str("out/trace.ldmtrace"));
  REQUIRE(summary.code == 0);
  CHECK_THAT(summary.output, Catch::Contains("check: no reports"));
  const CliResult json = run_cli("trace summary --json " + dir.str("out/trace.ldmtrace"), true);
  REQUIRE(json.code == 0);
  const nlohmann::json j = nlohmann::json::parse(json.output);
  REQUIRE(j.contains("check"));
  CHECK(j["check"].empty());
}
