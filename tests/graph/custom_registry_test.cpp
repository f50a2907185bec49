// A graph carries the registry it was built with: a user's operator kinds run alike in a plain run, a split run
// (whose pieces, reduction adds and activations are bound again; a kind splits by its traits, not its name) and
// through the fusion pass (whose store folds rebind the producer), never silently replaced by the built-in kinds.
#include <algorithm>
#include <catch2/catch.hpp>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/fusion.hpp"
#include "support/wrapping_kind.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

/// The built-in kinds, with "relu" computing neg instead and a new kind "my_conv" that is conv.
OperatorRegistry user_registry() {
  OperatorRegistry r = OperatorRegistry::builtin();
  r.add(std::make_unique<test::WrappingKind>("relu", "neg"));
  r.add(std::make_unique<test::WrappingKind>("my_conv", "conv"));
  return r;
}

/// my_conv, then the user's "relu" (a neg) on its output: an op the split rule cuts into pieces per core group.
json conv_then_relu() {
  return json::parse(R"({
    "name": "custom",
    "tensors": {"x": {"shape": [1, 8, 12, 12], "init": {"normal": [0, 1], "seed": 1}},
                "w": {"shape": [8, 8, 3, 3], "init": {"uniform": [-0.2, 0.2], "seed": 2}}},
    "ops": [{"type": "my_conv", "inputs": ["x", "w"], "outputs": ["c"], "attrs": {"pad": 1}},
            {"type": "relu", "inputs": ["c"], "outputs": ["y"]}],
    "outputs": ["y"]
  })");
}

/// my_conv, then a built-in clip (ReLU6) that alone reads its output: the fusion pass folds it into my_conv's store.
json conv_then_clip() {
  json w = conv_then_relu();
  w["ops"][1] = {{"type", "clip"}, {"inputs", {"c"}}, {"outputs", {"y"}}, {"attrs", {{"min", 0}, {"max", 6}}}};
  return w;
}

Arch two_groups() {
  Arch arch = Arch::preset("sw26010");
  REQUIRE(arch.core_groups > 1);
  return arch;
}

ExecutionResult run(const Graph& g, bool split) {
  Machine m(two_groups());
  ExecuteOptions options;
  options.split.enabled = split;
  return execute(g, m, options);
}

std::size_t negatives(const std::vector<f16>& v) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](f16 x) { return static_cast<float>(x) < 0; }));
}

bool same_bits(const std::vector<f16>& a, const std::vector<f16>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](f16 x, f16 y) { return x.bits == y.bits; });
}

}  // namespace

TEST_CASE("a graph keeps the registry it was built with", "[graph][registry]") {
  const OperatorRegistry registry = user_registry();
  const Graph g = workload_from_json(conv_then_relu(), "custom.json", ".", registry);
  CHECK(g.registry().same_kinds(registry));
  CHECK(g.registry().find("my_conv") != nullptr);
  // A graph given no registry binds with the built-in kinds.
  CHECK(Graph().registry().find("my_conv") == nullptr);
  CHECK(Graph().registry().find("relu") != nullptr);
}

TEST_CASE("a user's operator kinds run alike in a plain and a split run", "[graph][registry]") {
  const Graph g = workload_from_json(conv_then_relu(), "custom.json", ".", user_registry());
  const ExecutionResult plain = run(g, false);
  const std::vector<f16>& y = plain.outputs.at("y");
  // The user's "relu" ran (it negates): a built-in relu leaves no negative value.
  CHECK(negatives(y) > y.size() / 4);
  // Split, the pieces are bound again: with the graph's kinds, not the built-in relu. my_conv splits as a conv (its
  // kind's traits, its bound op's geometry), though no split rule names it.
  const ExecutionResult split = run(g, true);
  REQUIRE(split.ops.size() == 2);
  CHECK(split.ops[0].split.has_value());
  CHECK(split.ops[1].split.has_value());
  CHECK(split.ops[1].split->rule == "elementwise");
  CHECK(same_bits(split.outputs.at("y"), y));
}

TEST_CASE("a user's operator kind survives the fusion pass", "[graph][registry]") {
  const OperatorRegistry registry = user_registry();
  const Graph g = workload_from_json(conv_then_clip(), "custom.json", ".", registry);
  // The clip folds into my_conv's store, which binds my_conv again: with the built-in kinds that is an unknown op.
  const FusedGraph fused = fuse(g, two_groups(), StagingPolicy::kMethod);
  REQUIRE(fused.folds.size() == 1);
  REQUIRE(fused.graph.ops().size() == 1);
  CHECK(fused.graph.ops()[0].type == "my_conv");
  CHECK(fused.graph.registry().same_kinds(registry));
  const ExecutionResult apart = run(g, false);
  CHECK(negatives(apart.outputs.at("y")) == 0);
  CHECK(same_bits(run(fused.graph, false).outputs.at("y"), apart.outputs.at("y")));
  CHECK(same_bits(run(fused.graph, true).outputs.at("y"), apart.outputs.at("y")));
}
