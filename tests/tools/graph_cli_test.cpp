// `ldmsim run --dump-graph` and `ldmsim pad` on the graph layer: the plan is printed before the run, tensors stay
// on the device (stats.json), impossible shapes are refused with exit 2.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace ldmsim::testing;
using Catch::Contains;

TEST_CASE("run --dump-graph prints the planned graph and the run keeps tensors on the device", "[cli]") {
  ScratchDir dir("dump-graph");
  const CliResult r = run_cli(
      fmt::format("run {}/bench/workloads/chain10.json --arch tiny --no-trace --dump-graph --fusion off --out {}",
                  LDMSIM_SOURCE_DIR, dir.path.string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("graph chain10: 12 tensors, 10 ops, staging method"));
  CHECK_THAT(r.output, Contains("free %") && Contains("device memory: peak"));
  // The element-wise ops take the softmaxes' layout (x is staged in it), so nothing is re-laid out.
  CHECK_THAT(r.output, !Contains("relayout %"));
  const auto stats = nlohmann::json::parse(read_file(dir.path / "stats.json"));
  CHECK(stats["relayouts"].size() == 0);
  CHECK(stats["device_memory"]["peak_tensor_bytes"].get<std::uint64_t>() <
        stats["device_memory"]["tensor_bytes_without_freeing"].get<std::uint64_t>());
  // Only the two inputs went up and the output came down: 3 tensors of 105105 elements, padded by at most a row.
  CHECK(stats["padding"]["bytes_staged"].get<std::uint64_t>() < 3 * (105105 + 106) * 2);
}

TEST_CASE("pad refuses shapes whose element count would wrap", "[cli]") {
  const CliResult r = run_cli("pad --op relu --shape 100000,100000,100000,100000");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("--shape 100000,100000,100000,100000") && Contains("2^48"));
  const CliResult ok = run_cli("pad --op fc --shape 1,3,5,5");
  CHECK(ok.code == 0);
  CHECK_THAT(ok.output, Contains("fc on 1x3x5x5"));
}

TEST_CASE("run --conv-algo picks the convolution algorithm, results are bit-identical", "[cli]") {
  std::string first;
  for (const char* algo : {"implicit-precomp", "im2col", "direct", "implicit"}) {
    INFO(algo);
    ScratchDir dir("conv-algo");
    const CliResult r = run_cli(fmt::format("run {}/examples/conv_block.json --conv-algo {} --out {}",
                                            LDMSIM_SOURCE_DIR, algo, dir.path.string()));
    INFO(r.output);
    REQUIRE(r.code == 0);
    const std::string logits = read_file(dir.path / "logits.npy") + read_file(dir.path / "c1.npy");
    // stats.json says which algorithm ran, what it added to main memory and how the engine dealt its blocks.
    const auto stats = nlohmann::json::parse(read_file(dir.path / "stats.json"));
    const auto& metrics = stats["ops"][0]["metrics"];
    CHECK(metrics["algo"] == algo);
    CHECK((metrics["extra_main_memory_bytes"].get<std::uint64_t>() > 0) ==
          (std::string(algo) == "im2col" || std::string(algo) == "implicit-precomp"));
    CHECK(metrics["blocking"]["blocks"].get<std::uint64_t>() > 0);
    CHECK(metrics["blocking"].contains("dealt_as"));
    if (first.empty()) first = logits;
    CHECK(logits == first);
    // im2col's first launch writes the image matrix; the others build tiles in ldm.
    const auto exported = dir.path / "trace.json";
    REQUIRE(
        run_cli(fmt::format("trace export {} -o {}", (dir.path / "trace.ldmtrace").string(), exported.string())).code ==
        0);
    CHECK((read_file(exported).find("\"conv#0:im2col\"") != std::string::npos) == (std::string(algo) == "im2col"));
  }
  const CliResult bad = run_cli("run " + std::string(LDMSIM_SOURCE_DIR) + "/examples/conv_block.json --conv-algo fft");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.output, Contains("--conv-algo"));
}

TEST_CASE("a depthwise conv runs the depthwise kernel unless told otherwise, with the same outputs", "[cli]") {
  // relu6_block: a 3x3 conv, a depthwise conv (its relu6 an attribute), two 1x1 convs and an fc.
  std::string first;
  for (const char* flag : {"", "--conv-algo implicit-precomp", "--conv-algo depthwise"}) {
    INFO(flag);
    ScratchDir dir("depthwise-algo");
    const CliResult r = run_cli(fmt::format("run {}/examples/relu6_block.json {} --no-trace --out {}",
                                            LDMSIM_SOURCE_DIR, flag, dir.path.string()));
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto stats = nlohmann::json::parse(read_file(dir.path / "stats.json"));
    std::vector<std::string> algos;
    for (const auto& op : stats["ops"]) {
      if (op["metrics"].contains("algo")) algos.push_back(op["metrics"]["algo"].get<std::string>());
    }
    const std::string depthwise = std::string(flag).ends_with("implicit-precomp") ? "implicit-precomp" : "depthwise";
    CHECK(algos == std::vector<std::string>{"implicit-precomp", depthwise, "implicit-precomp", "implicit-precomp"});
    const std::string y = read_file(dir.path / "y.npy");
    if (first.empty()) first = y;
    CHECK(y == first);
  }
}

TEST_CASE("run --dump-graph shows the fusion groups, and --fusion off runs every op on its own", "[cli][fusion]") {
  ScratchDir on("fusion-on"), off("fusion-off");
  const std::string workload = fmt::format("{}/bench/workloads/chain10.json", LDMSIM_SOURCE_DIR);
  const CliResult r =
      run_cli(fmt::format("run {} --arch sw26010 --no-trace --dump-graph --out {}", workload, on.path.string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  // Four softmaxes over the same trailing axes and the element-wise ops between them: one group, one kernel.
  CHECK_THAT(r.output, Contains("fusion: 1 candidate group, 1 fused"));
  CHECK_THAT(r.output, Contains("backbones: softmax#1 (primary), softmax#3 (secondary)"));
  CHECK_THAT(r.output, Contains("kernel fused#0:"));
  CHECK_THAT(r.output, Contains("graph chain10: 3 tensors, 1 ops"));
  const auto fused = nlohmann::json::parse(read_file(on.path / "stats.json"));
  CHECK(fused["ops"].size() == 1);
  CHECK(fused["fusion"]["fused_kernels"] == 1);
  CHECK(fused["fusion"]["ops_before"] == 10);
  const CliResult u =
      run_cli(fmt::format("run {} --arch sw26010 --no-trace --fusion off --out {}", workload, off.path.string()));
  REQUIRE(u.code == 0);
  const auto unfused = nlohmann::json::parse(read_file(off.path / "stats.json"));
  CHECK(unfused["ops"].size() == 10);
  CHECK(unfused["fusion"]["enabled"] == false);
  CHECK(fused["dma_bytes"].get<std::uint64_t>() < unfused["dma_bytes"].get<std::uint64_t>());
  CHECK(fused["cycles"].get<std::uint64_t>() < unfused["cycles"].get<std::uint64_t>());
  const CliResult bad = run_cli(fmt::format("run {} --fusion maybe --out {}", workload, off.path.string()));
  CHECK(bad.code != 0);
  CHECK_THAT(bad.output, Contains("--fusion"));
}

TEST_CASE("run tells a workload from a model by content, not by the file's name", "[cli]") {
  ScratchDir dir("by-content");
  const std::filesystem::path renamed = dir.path / "chain10.model";
  std::filesystem::copy_file(std::filesystem::path(LDMSIM_SOURCE_DIR) / "bench/workloads/chain10.json", renamed);
  const CliResult r =
      run_cli(fmt::format("run {} --arch tiny --no-trace --out {}", renamed.string(), (dir.path / "out").string()));
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(std::filesystem::exists(dir.path / "out" / "stats.json"));
  std::ofstream(dir.path / "text.model") << "neither a workload nor a model";
  const CliResult bad =
      run_cli(fmt::format("run {} --out {}", (dir.path / "text.model").string(), (dir.path / "out2").string()));
  CHECK(bad.code == 2);
  CHECK_THAT(bad.output, Contains("text.model") && Contains("unknown format") && Contains("workload JSON"));
}

TEST_CASE("run's --input takes one value and needs a model, and usage errors read like every other error", "[cli]") {
  ScratchDir dir("input-flag");
  const std::string workload = fmt::format("{}/bench/workloads/chain10.json", LDMSIM_SOURCE_DIR);
  // The path after --input NAME=FILE is the model, not a second input: this workload refuses input files.
  const CliResult after = run_cli(fmt::format("run --input x=a.npy {} --out {}", workload, (dir.path / "a").string()));
  CHECK(after.code == 2);
  CHECK_THAT(after.output, Contains("chain10.json") && Contains("ONNX model's inputs"));
  CHECK_THAT(after.output, !Contains("built-in demo"));
  const CliResult alone = run_cli(fmt::format("run --input x=a.npy --out {}", (dir.path / "b").string()));
  CHECK(alone.code == 2);
  CHECK_THAT(alone.output, Contains("give the model too"));
  CHECK_FALSE(std::filesystem::exists(dir.path / "b"));
  const CliResult usage = run_cli("run --threads many");
  CHECK(usage.code == 2);
  CHECK_THAT(usage.output, Contains("ldmsim: error:") && Contains("--threads") && Contains("--help"));
}
