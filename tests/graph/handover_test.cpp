// reshape / flatten on the device: the output takes over a dying input's buffer (no kernel, no copy); an input
// that is still needed later is copied by the re-layout kernel instead.
#include <catch2/catch.hpp>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

std::vector<std::string> launches(const Machine& m) {
  std::vector<std::string> out;
  for (const Marker& mk : m.trace()[0]->markers()) {
    if (mk.kind == MarkerKind::kLaunchBegin) out.push_back(mk.text);
  }
  return out;
}

json workload(bool keep_a) {
  json w = json::parse(R"({
    "tensors": {"x": {"shape": [2, 3, 5, 7], "init": {"uniform": [-2, 2], "seed": 5}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["a"]},
            {"type": "flatten", "inputs": ["a"], "outputs": ["b"]},
            {"type": "softmax", "inputs": ["b"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  if (keep_a) {
    w["ops"].push_back({{"type", "sigmoid"}, {"inputs", {"a"}}, {"outputs", {"z"}}});
    w["outputs"].push_back("z");
  }
  return w;
}

}  // namespace

TEST_CASE("flatten of a dying tensor hands its buffer over, of a live one, copies it", "[graph]") {
  std::vector<f16> y_handed, y_copied;
  for (bool keep_a : {false, true}) {
    const Graph g = workload_from_json(workload(keep_a), "w.json", ".", test::registry());
    const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
    const auto handovers = std::count_if(plan.steps.begin(), plan.steps.end(),
                                         [](const Step& s) { return s.kind == Step::Kind::kHandOver; });
    CHECK(handovers == (keep_a ? 0 : 1));
    Machine m{test::small_arch()};
    const ExecutionResult r = execute(g, plan, m);
    const auto names = launches(m);
    CHECK((std::find(names.begin(), names.end(), "flatten#1") != names.end()) == keep_a);
    const auto flatten_bytes = r.stats["ops"][1]["dma_bytes"].get<std::uint64_t>();
    CHECK((flatten_bytes > 0) == keep_a);  // the copy moves bytes, the hand-over none
    if (!keep_a) CHECK_THAT(r.stats["ops"][1]["buffer"].get<std::string>(), Catch::Contains("'a'"));
    (keep_a ? y_copied : y_handed) = r.outputs.at("y");
  }
  CHECK(y_handed == y_copied);
  // And against the host: softmax over each sample's 105 relu'd values.
  const Graph g = workload_from_json(workload(false), "w.json", ".", test::registry());
  const std::vector<f16> x = initial_values(g.tensor(*g.find("x"))).to_vector();
  for (std::size_t n = 0; n < 2; ++n) {
    double sum = 0;
    for (std::size_t i = 0; i < 105; ++i) sum += std::exp(std::max(0.0f, static_cast<float>(x[n * 105 + i])));
    for (std::size_t i = 0; i < 105; ++i) {
      const double want = std::exp(std::max(0.0f, static_cast<float>(x[n * 105 + i]))) / sum;
      REQUIRE(static_cast<float>(y_handed[n * 105 + i]) == Approx(want).margin(1e-3));
    }
  }
}
