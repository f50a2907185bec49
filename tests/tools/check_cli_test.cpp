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
