// Workloads end to end: validation errors for each kind of bad workload, and a run matching the references.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "support/temp_dir.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {
json good() {
  return json::parse(R"({
    "tensors": {"x": {"shape": [1, 3, 5, 5], "init": {"uniform": [-1, 1], "seed": 3}},
                "w": {"shape": [4, 75], "init": {"normal": [0, 0.1], "seed": 4}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["r"]},
            {"type": "fc", "inputs": ["r", "w"], "outputs": ["y"]},
            {"type": "softmax", "inputs": ["y"], "outputs": ["p"]}],
    "outputs": ["p"]})");
}
std::string error_of(const json& tree) {
  try {
    workload_from_json(tree, "test.json", ".", test::registry());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("bad workloads are rejected before running, naming the op or tensor", "[workload]") {
  CHECK(error_of(good()) == "accepted");
  json t = good();
  t["ops"][1]["type"] = "deconv";
  CHECK_THAT(error_of(t), Catch::Contains("op 1: unknown op 'deconv'"));
  t = good();
  t["tensors"]["w"]["shape"] = {4, 74};
  CHECK_THAT(error_of(t), Catch::Contains("op 1 (fc)") && Catch::Contains("c*h*w"));
  t = good();
  t["ops"][0]["inputs"] = {"nope"};
  CHECK_THAT(error_of(t), Catch::Contains("op 0 (relu): missing tensor 'nope'"));
  t = good();
  t["ops"][2]["outputs"] = {"r"};
  CHECK_THAT(error_of(t), Catch::Contains("'r' is produced twice"));
  t = good();
  t["ops"][0]["inputs"] = {"p"};
  CHECK_THAT(error_of(t), Catch::Contains("op 0 (relu): cycle: input 'p' is produced by op 2"));
  t = good();
  t["ops"][2]["attrs"] = {{"axis", 3}};
  CHECK_THAT(error_of(t), Catch::Contains("op 2 (softmax)") && Catch::Contains("axis"));
  t = good();
  t["tensors"]["p"] = {{"shape", {1, 5}}};
  CHECK_THAT(error_of(t), Catch::Contains("shape mismatch: 'p'"));
  t = good();
  t["tensors"]["x"]["init"] = {{"file", "/nonexistent/x.npy"}};
  CHECK_THAT(error_of(t), Catch::Contains("tensor 'x': unreadable .npy"));
  const test::TempDir dir("workload");
  const auto file = dir / "x.npy";
  write_npy(file, {1, 3, 5, 5}, std::vector<f16>(75, f16(1.0f)));
  t = good();
  t["tensors"]["x"] = {{"shape", {1, 3, 5, 5}}, {"dtype", "f32"}, {"init", {{"file", file.string()}}}};
  CHECK_THAT(error_of(t), Catch::Contains("tensor 'x': dtype mismatch"));
  t["tensors"]["x"]["dtype"] = "f16";
  CHECK(error_of(t) == "accepted");
  t = good();
  t["outputs"] = {"q"};
  CHECK_THAT(error_of(t), Catch::Contains("outputs: missing tensor \"q\""));
}

TEST_CASE("a workload runs under method and naive with equal outputs and stats per op", "[workload]") {
  const Graph w = workload_from_json(good(), "test.json", ".", test::registry());
  std::vector<std::vector<f16>> outs;
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    Machine m{test::small_arch()};
    const ExecutionResult r = execute(w, m, ExecuteOptions{.staging = p});
    REQUIRE(r.stats["ops"].size() == 3);
    CHECK(r.stats["ops"][1]["dma_bytes"].get<std::uint64_t>() > 0);
    CHECK(r.stats["cycles"].get<std::uint64_t>() > 0);
    outs.push_back(r.outputs.at("p"));
    if (p == StagingPolicy::kMethod) CHECK(r.stats["padding"]["bytes_added"].get<std::uint64_t>() < 40);
  }
  CHECK(outs[0] == outs[1]);
  float sum = 0;
  for (f16 v : outs[0]) sum += static_cast<float>(v);
  CHECK(sum == Approx(1.0f).epsilon(0.01));
  Machine m{test::small_arch()};
  CHECK_THROWS_AS(execute(w, m, ExecuteOptions{.staging = StagingPolicy::kNone}), Fault);
}

TEST_CASE("in-memory arrays are moved into the graph, each backing one tensor", "[workload]") {
  const json tree = json::parse(R"({
    "tensors": {"x": {"shape": [2, 2], "init": {"file": "x.npy"}},
                "w": {"shape": [2, 2], "init": {"file": "x.npy"}}},
    "ops": [{"type": "add", "inputs": ["x", "w"], "outputs": ["y"], "name": "sum"}],
    "outputs": ["y"]})");
  std::map<std::string, NpyArray> arrays;
  arrays["x.npy"] = NpyArray{{2, 2}, "f2", {}, SharedHalves(std::vector<f16>(4, f16(1.0f)))};
  WorkloadLoadOptions options;
  options.arrays = &arrays;
  // The second tensor naming the array must not silently read ./x.npy from disk instead.
  CHECK_THROWS_WITH(workload_from_json(tree, "t.json", ".", test::registry(), "t", options),
                    Catch::Contains("tensor 'x': the in-memory array 'x.npy' already backs another tensor") ||
                        Catch::Contains("tensor 'w': the in-memory array 'x.npy' already backs another tensor"));
  json one = tree;
  one["tensors"].erase("w");
  one["tensors"]["w"] = {{"shape", {2, 2}}, {"init", {{"value", 1}}}};
  const std::vector<f16> values{f16(1.0f), f16(2.0f), f16(3.0f), f16(4.0f)};
  arrays["x.npy"] = NpyArray{{2, 2}, "f2", {}, SharedHalves(values)};
  const f16* held = arrays["x.npy"].halves.data();
  const Graph g = workload_from_json(one, "t.json", ".", test::registry(), "t", options);
  CHECK(g.tensor(*g.find("x")).init.data.to_vector() == values);
  CHECK(g.tensor(*g.find("x")).init.data.data() == held);  // moved, not copied
  CHECK(arrays["x.npy"].halves.empty());
  CHECK(g.ops()[0].layer() == "sum");
}
