// Inputs read in any layout (BoundOp::reads_any_layout: conv's X, pools, concat): the layout pass hands them the
// copy as it lies, so a conv's output with even rows ([K, P*Q] padded to an even row pitch) reaches the next conv,
// pool or concat without a re-layout; the outputs are the bits every staging policy computes.
#include <catch2/catch.hpp>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

std::size_t relayout_steps(const ExecutionPlan& plan) {
  return static_cast<std::size_t>(std::count_if(plan.steps.begin(), plan.steps.end(),
                                                [](const Step& s) { return s.kind == Step::Kind::kRelayout; }));
}

/// 13x13 planes (169 elements, odd): every conv writes its Y with a row pitch of 170.
json odd_planes() {
  return json::parse(R"({
    "name": "odd_planes",
    "tensors": {"x": {"shape": [1, 4, 13, 13], "init": {"uniform": [-2, 2], "seed": 21}},
                "w1": {"shape": [6, 4, 3, 3], "init": {"uniform": [-1, 1], "seed": 22}},
                "w2": {"shape": [6, 6, 3, 3], "init": {"uniform": [-1, 1], "seed": 23}},
                "w3": {"shape": [5, 6, 1, 1], "init": {"uniform": [-1, 1], "seed": 24}}},
    "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["a"], "attrs": {"pad": 1}},
            {"type": "conv", "inputs": ["a", "w2"], "outputs": ["b"], "attrs": {"pad": 1}},
            {"type": "conv", "inputs": ["a", "w3"], "outputs": ["c"]},
            {"type": "concat", "inputs": ["b", "c"], "outputs": ["d"], "attrs": {"axis": 1}},
            {"type": "max_pool", "inputs": ["b"], "outputs": ["e"], "attrs": {"kernel": 3, "stride": 1, "pad": 1}},
            {"type": "global_avg_pool", "inputs": ["c"], "outputs": ["f"]}],
    "outputs": ["d", "e", "f"]})");
}

}  // namespace

TEST_CASE("convs pools and concats read a conv's even-row output as it lies: no re-layout", "[graph]") {
  const Graph g = workload_from_json(odd_planes(), "odd_planes.json", ".", test::registry());
  const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
  CHECK(relayout_steps(plan) == 0);
  // The second conv reads `a` as planes 170 elements apart (the first conv's row pitch), not the natural 169.
  const Layout& a_as_x = plan.op_plans[1][0].layout;
  CHECK(a_as_x.shape == Shape4::view_of(Shape{1, 6, 13, 13}));
  CHECK(a_as_x.hw_pitch == 170);
  CHECK(a_as_x.w_pitch == 13);
  CHECK(a_as_x.same_placement(plan.op_plans[0][2].layout));
  // Both padding policies compute the same bits, whatever layouts their plans read.
  std::map<std::string, std::vector<f16>> first;
  for (const StagingPolicy policy : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    CAPTURE(to_string(policy));
    Machine m{test::small_arch()};
    const ExecutionResult r = execute(g, m, ExecuteOptions{.staging = policy});
    if (policy == StagingPolicy::kMethod) CHECK(r.stats["relayouts"].empty());
    for (const auto& [name, values] : r.outputs) {
      CAPTURE(name);
      if (first.count(name) == 0) {
        first[name] = values;
        continue;
      }
      const std::vector<f16>& want = first[name];
      REQUIRE(values.size() == want.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < values.size(); ++i) differ += values[i].bits != want[i].bits ? 1U : 0U;
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("a reader in any layout takes the copy an earlier reader had re-laid out", "[graph]") {
  // softmax over the rows of `a` wants its own layout: `a` is re-laid out once for it, and the conv after it reads
  // that copy instead of a second re-layout back to the producer's.
  const json w = json::parse(R"({
    "tensors": {"x": {"shape": [1, 4, 13, 13], "init": {"uniform": [-2, 2], "seed": 31}},
                "w1": {"shape": [6, 4, 3, 3], "init": {"uniform": [-1, 1], "seed": 32}},
                "w2": {"shape": [6, 6, 3, 3], "init": {"uniform": [-1, 1], "seed": 33}}},
    "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["a"], "attrs": {"pad": 1}},
            {"type": "softmax", "inputs": ["a"], "outputs": ["s"], "attrs": {"axis": 3}},
            {"type": "conv", "inputs": ["a", "w2"], "outputs": ["b"], "attrs": {"pad": 1}}],
    "outputs": ["s", "b"]})");
  const Graph g = workload_from_json(w, "w.json", ".", test::registry());
  const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
  REQUIRE(relayout_steps(plan) == 1);
  CHECK(plan.op_plans[2][0].layout.same_placement(plan.op_plans[1][0].layout));
  Machine m{test::small_arch()};
  const ExecutionResult r = execute(g, plan, m);
  CHECK(r.stats["relayouts"].size() == 1);
}

TEST_CASE("planes shorter than 128 elements are re-laid out for the next conv", "[graph]") {
  // 7x7 planes: read as they lie, one request per 49-element plane; the re-laid-out copy is read several planes at
  // a time, which costs less than the re-layout.
  const json w = json::parse(R"({
    "tensors": {"x": {"shape": [1, 4, 7, 7], "init": {"uniform": [-2, 2], "seed": 41}},
                "w1": {"shape": [6, 4, 3, 3], "init": {"uniform": [-1, 1], "seed": 42}},
                "w2": {"shape": [6, 6, 3, 3], "init": {"uniform": [-1, 1], "seed": 43}}},
    "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["a"], "attrs": {"pad": 1}},
            {"type": "conv", "inputs": ["a", "w2"], "outputs": ["b"], "attrs": {"pad": 1}}],
    "outputs": ["b"]})");
  const Graph g = workload_from_json(w, "w.json", ".", test::registry());
  const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
  CHECK(relayout_steps(plan) == 1);
  CHECK(plan.op_plans[1][0].layout.hw_pitch == 49);
}

TEST_CASE("pieces and ops whole on one group read a conv's even-row output as it lies too", "[graph][split]") {
  // conv then max_pool and a 1x1 conv on 31x33 planes (odd: written 1024 apart), pinned: each whole on group 1;
  // or the convs cut by rows (the second's pieces read the first's rows, 16 and 15 of them, as they lie) and the pool
  // whole. No re-layout kernel runs, and the outputs are the bits
  // of --split off.
  const json w = json::parse(R"({
    "tensors": {"x": {"shape": [1, 4, 31, 33], "init": {"uniform": [-2, 2], "seed": 51}},
                "w1": {"shape": [6, 4, 3, 3], "init": {"uniform": [-1, 1], "seed": 52}},
                "w2": {"shape": [6, 6, 1, 1], "init": {"uniform": [-1, 1], "seed": 53}}},
    "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["a"], "attrs": {"pad": 1}},
            {"type": "max_pool", "inputs": ["a"], "outputs": ["p"], "attrs": {"kernel": 3, "stride": 1, "pad": 1}},
            {"type": "conv", "inputs": ["a", "w2"], "outputs": ["b"]}],
    "outputs": ["p", "b"]})");
  const Graph g = workload_from_json(w, "w.json", ".", test::registry());
  const auto run = [&](const SplitOptions& split) {
    Machine m{test::small_arch()};
    ExecutionResult r = execute(g, m, ExecuteOptions{.split = split});
    std::size_t relayouts = 0;
    for (const auto& trace : m.trace()) {
      for (const Marker& mk : trace->markers()) {
        relayouts += mk.kind == MarkerKind::kLaunchBegin && mk.text.rfind("relayout", 0) == 0 ? 1U : 0U;
      }
    }
    return std::pair{std::move(r), relayouts};
  };
  const auto [off, off_relayouts] = run(SplitOptions{});
  CHECK(off_relayouts == 0);
  const std::vector<std::map<std::string, std::string>> pins = {
      {{g.ops()[0].layer(), "whole on cg1"},
       {g.ops()[1].layer(), "whole on cg1"},
       {g.ops()[2].layer(), "whole on cg1"}},
      {{g.ops()[0].layer(), "conv-h"}, {g.ops()[1].layer(), "whole"}, {g.ops()[2].layer(), "conv-h"}}};
  for (const auto& pinned : pins) {
    CAPTURE(pinned.begin()->second);
    const auto [r, relayouts] = run(SplitOptions{.enabled = true, .cost_aware = true, .pinned = pinned});
    CHECK(relayouts == 0);
    for (std::size_t i = 0; i < 3; ++i)
      CHECK(r.stats["ops"][i]["placement"]["placement"] == pinned.at(g.ops()[i].layer()));
    CHECK(r.outputs.at("p") == off.outputs.at("p"));
    CHECK(r.outputs.at("b") == off.outputs.at("b"));
  }
}
