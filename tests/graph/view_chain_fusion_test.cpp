// The fusion pass folds chains of view steps (a transformer's q/k/v split: slice, reshape, transpose) into one
// strided copy, or, ending in a transpose that moves the last axis (k to Kt), into that swap reading in place:
// outputs bit-identical to the unfolded graph, fewer cycles; a chain whose middle tensor is read elsewhere keeps its
// ops.
#include <catch2/catch.hpp>

#include "fusion_support.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"

using namespace ldmsim;
using fusion_cases::op;
using fusion_cases::tensor;
using nlohmann::json;

namespace {

std::size_t ops_of_type(const Graph& g, const std::string& type) {
  return static_cast<std::size_t>(
      std::count_if(g.ops().begin(), g.ops().end(), [&](const OpNode& o) { return o.type == type; }));
}

/// q, k and v split from one [tokens, 1, 3 * heads * dim] projection as torch exports multi-head attention.
json qkv_split(std::uint64_t tokens, std::uint64_t heads, std::uint64_t dim) {
  const std::uint64_t width = heads * dim;
  const auto part = [&](std::uint64_t k) {
    return json{{"starts", {k * width}}, {"ends", {(k + 1) * width}}, {"axes", {2}}};
  };
  const json shape = {tokens, heads, dim};
  json w;
  w["name"] = "qkv_split";
  w["tensors"] = {{"x", tensor({tokens, 1, 3 * width}, -2, 2, 1)}};
  w["ops"] = {op("slice", {"x"}, "q0", part(0)),
              op("reshape", {"q0"}, "q1", {{"shape", shape}}),
              op("transpose", {"q1"}, "q", {{"perm", {1, 0, 2}}}),
              op("slice", {"x"}, "k0", part(1)),
              op("reshape", {"k0"}, "k1", {{"shape", shape}}),
              op("transpose", {"k1"}, "kt", {{"perm", {1, 2, 0}}}),  // the last axis moves: a swap ends the chain
              op("slice", {"x"}, "v0", part(2)),
              op("reshape", {"v0"}, "v1", {{"shape", shape}}),
              op("transpose", {"v1"}, "v", {{"perm", {1, 0, 2}}})};
  w["outputs"] = {"q", "kt", "v", "v0"};  // v's slice is also an output: its chain stays apart
  return w;
}

}  // namespace

TEST_CASE("a slice, reshape and transpose chain becomes one strided copy with the same bits",
          "[graph][fusion][view_chain]") {
  const Arch arch = Arch::preset("sw26010pro");  // timed (tiny counts no cycles)
  const Graph g = test::graph_of(qkv_split(128, 4, 16));
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(f.view_chains.size() == 2);
  CHECK(f.view_chains[0].ops == std::vector<std::string>{"slice#0", "reshape#1", "transpose#2"});
  CHECK(f.view_chains[1].ops == std::vector<std::string>{"slice#3", "reshape#4", "transpose#5"});  // ends in a swap
  CHECK(ops_of_type(f.graph, "view") == 2);
  CHECK(ops_of_type(f.graph, "slice") == 1);
  CHECK(ops_of_type(f.graph, "transpose") == 1);
  CHECK_THAT(f.describe(g), Catch::Contains("view chain view#0: slice#0, reshape#1, transpose#2"));
  {
    const StagingPolicy policy = StagingPolicy::kMethod;
    ExecuteOptions options;
    options.staging = policy;
    Machine unfused_machine(arch), fused_machine(arch);
    const ExecutionResult unfused = execute(g, unfused_machine, options);
    const ExecutionResult fused = execute(fuse(g, arch, policy).graph, fused_machine, options);
    REQUIRE(fused.outputs.size() == 4);
    for (const auto& [name, values] : unfused.outputs) {
      CAPTURE(name);
      CHECK(fused.outputs.at(name) == values);
    }
    CHECK(fused.stats["cycles"].get<std::uint64_t>() < unfused.stats["cycles"].get<std::uint64_t>());
    CHECK(fused.stats["dma_bytes"].get<std::uint64_t>() < unfused.stats["dma_bytes"].get<std::uint64_t>());
  }
  // Naive staging pads inside rows, where one copy of the chain reads element by element: no fold.
  CHECK(fuse(g, arch, StagingPolicy::kNaive).view_chains.empty());
  FusionOptions off;
  off.view_chains = false;
  const FusedGraph kept = fuse(g, arch, StagingPolicy::kMethod, off);
  CHECK(kept.view_chains.empty());
  CHECK(ops_of_type(kept.graph, "view") == 0);
}

namespace {

/// Multi-head attention on one [tokens, 1, 3 * heads * dim] projection as torch exports it: q, k and v split into
/// heads, softmax(q kt * scale + mask) v, the heads merged back to [tokens, heads * dim].
json attention_block(std::uint64_t tokens, std::uint64_t heads, std::uint64_t dim) {
  json w = qkv_split(tokens, heads, dim);
  w["name"] = "attention_block";
  w["tensors"]["mask"] = tensor({heads, 1, tokens}, -4, 0, 4);
  w["tensors"]["scale"] = fusion_cases::scalar(0.25);
  for (const json& o : {op("matmul", {"q", "kt"}, "scores"), op("mul", {"scores", "scale"}, "scaled"),
                        op("add", {"scaled", "mask"}, "masked"), op("softmax", {"masked"}, "probs", {{"axis", -1}}),
                        op("matmul", {"probs", "v"}, "y"), op("transpose", {"y"}, "merged", {{"perm", {1, 0, 2}}}),
                        op("reshape", {"merged"}, "out", {{"shape", {tokens, heads * dim}}})}) {
    w["ops"].push_back(o);
  }
  w["outputs"] = {"out"};
  return w;
}

ExecutionResult run_fused(const Graph& g, const Arch& arch, const FusionOptions& options) {
  Machine machine(arch);
  return execute(fuse(g, arch, StagingPolicy::kMethod, options).graph, machine, ExecuteOptions{});
}

}  // namespace

TEST_CASE("an attention kernel reads q, k and v where the projection holds them and writes the merged heads",
          "[graph][fusion][view_chain][attention]") {
  const Arch arch = Arch::preset("sw26010pro");
  const Graph g = test::graph_of(attention_block(32, 4, 16));
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(f.attention_views.size() == 1);
  CHECK(f.attention_views[0].roles == std::vector<std::string>{"Q", "K", "V", "Y"});
  CHECK(ops_of_type(f.graph, "attention") == 1);
  CHECK(ops_of_type(f.graph, "view") == 0);
  CHECK(ops_of_type(f.graph, "transpose") == 0);
  // Named by the ops of the graph given to fuse(): the chains' members and the merge's transpose.
  CHECK_THAT(f.describe(g), Catch::Contains("reads and writes in place") && Catch::Contains("read in place by") &&
                                Catch::Contains("slice#0+reshape#1+transpose#2 (Q)") &&
                                Catch::Contains("slice#3+reshape#4+transpose#5 (K)") &&
                                Catch::Contains("transpose#14 (Y)"));
  // The attention op reads the projection three times, at the three parts' offsets.
  const OpNode& attention =
      *std::find_if(f.graph.ops().begin(), f.graph.ops().end(), [](const OpNode& o) { return o.type == "attention"; });
  CHECK(f.graph.tensor(attention.inputs[0]).name == "x");
  CHECK(f.graph.tensor(attention.inputs[1]).name == "x");
  CHECK(f.graph.tensor(attention.inputs[2]).name == "x");

  FusionOptions copies;
  copies.view_chains = false;
  const ExecutionResult in_place = run_fused(g, arch, FusionOptions{}), copied = run_fused(g, arch, copies);
  CHECK(in_place.outputs.at("out") == copied.outputs.at("out"));  // the same arithmetic, other addresses
  CHECK(in_place.stats["cycles"].get<std::uint64_t>() < copied.stats["cycles"].get<std::uint64_t>());
  CHECK(in_place.stats["dma_bytes"].get<std::uint64_t>() < copied.stats["dma_bytes"].get<std::uint64_t>());

  // Placements the kernel cannot take are refused: a row off a whole word, Y's rows written twice.
  const FusedGraph packed = fuse(g, arch, StagingPolicy::kMethod, copies);
  const OpNode& plain = *std::find_if(packed.graph.ops().begin(), packed.graph.ops().end(),
                                      [](const OpNode& o) { return o.type == "attention"; });
  const std::array<Shape, 3> sources{Shape{32, 1, 192}, Shape{32, 1, 192}, Shape{32, 1, 192}};
  AttentionViews good;
  good.q = {0, 16, 192};
  good.kt = {64, 16, 192};
  good.k_rows = true;
  good.v = {128, 16, 192};
  good.y = {0, 16, 64};
  CHECK(attention_with_views(*plain.bound, sources, Shape{32, 4, 16}, good) != nullptr);
  AttentionViews odd = good;
  odd.q.offset = 1;
  CHECK(attention_with_views(*plain.bound, sources, Shape{32, 4, 16}, odd) == nullptr);
  AttentionViews twice = good;
  twice.y.batch = 0;
  CHECK(attention_with_views(*plain.bound, sources, Shape{32, 4, 16}, twice) == nullptr);
  AttentionViews outside = good;
  outside.v.offset = 192;
  CHECK(attention_with_views(*plain.bound, sources, Shape{32, 4, 16}, outside) == nullptr);
}

TEST_CASE("an attention kernel reads K's rows where two transposes made Kt of them", "[graph][fusion][view_chain]") {
  // k [tokens, heads, dim] -> [heads, tokens, dim] -> Kt [heads, dim, tokens]: each head's K is one swapped matrix.
  json w = attention_block(40, 3, 10);
  json ops = json::array();
  for (const json& o : w["ops"]) {
    if (o["outputs"][0] == "kt") {
      ops.push_back(op("transpose", {"k1"}, "k2", {{"perm", {1, 0, 2}}}));
      ops.push_back(op("transpose", {"k2"}, "kt", {{"perm", {0, 2, 1}}}));
    } else {
      ops.push_back(o);
    }
  }
  w["ops"] = ops;
  const Arch arch = Arch::preset("sw26010");
  const Graph g = test::graph_of(w);
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(f.attention_views.size() == 1);
  CHECK(f.attention_views[0].roles == std::vector<std::string>{"Q", "K", "V", "Y"});
  FusionOptions copies;
  copies.view_chains = false;
  CHECK(run_fused(g, arch, FusionOptions{}).outputs.at("out") == run_fused(g, arch, copies).outputs.at("out"));
}

TEST_CASE("an attention kernel reading in place is deterministic across host threads",
          "[graph][fusion][view_chain][attention]") {
  const Arch arch = Arch::preset("sw26010pro");
  const FusedGraph f = fuse(test::graph_of(attention_block(32, 12, 16)), arch, StagingPolicy::kMethod);
  REQUIRE(f.attention_views.size() == 1);
  const auto [r1, r4] = test::run_one_and_four_threads(f.graph, arch);
  CHECK(r1.outputs == r4.outputs);
  CHECK(r1.stats == r4.stats);
}

TEST_CASE("a reshape whose input is read after it hands its buffer over to a reshape back", "[graph][fusion]") {
  // A transformer's batch-first input seen sequence-first, and read again by the residual add.
  json w;
  w["name"] = "reshape_back";
  w["tensors"] = {{"x", tensor({1, 64, 32}, -2, 2, 1)}};
  w["ops"] = {op("reshape", {"x"}, "y", {{"shape", {64, 1, 32}}}), op("relu", {"y"}, "z"),
              op("reshape", {"z"}, "zb", {{"shape", {1, 64, 32}}}), op("add", {"x", "zb"}, "out")};
  w["outputs"] = {"out"};
  const Arch arch = Arch::preset("sw26010pro");
  const Graph g = test::graph_of(w);
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  const auto back = std::find_if(f.graph.ops().begin(), f.graph.ops().end(),
                                 [](const OpNode& o) { return o.type == "reshape" && o.outputs.size() == 1; });
  REQUIRE(back != f.graph.ops().end());
  CHECK(f.graph.find("x:back").has_value());
  const auto hand_overs = [](const Graph& graph) {
    const ExecutionPlan plan = plan_execution(graph, StagingPolicy::kMethod);
    return std::count_if(plan.steps.begin(), plan.steps.end(),
                         [](const Step& s) { return s.kind == Step::Kind::kHandOver; });
  };
  FusionOptions copying;
  copying.reshape_back = false;
  const Graph kept = fuse(g, arch, StagingPolicy::kMethod, copying).graph;
  CHECK(hand_overs(f.graph) == 3);  // x to y, y to x:back, z to zb
  // Naive staging pads [1, 64, 32] and [64, 1, 32] differently: no hand-over either way, so no reshape back.
  CHECK_FALSE(fuse(g, arch, StagingPolicy::kNaive).graph.find("x:back").has_value());
  CHECK(hand_overs(kept) == 1);  // z to zb: y is a copy while x lives on
  Machine a(arch), b(arch);
  const ExecutionResult r = execute(f.graph, a), c = execute(kept, b);
  CHECK(r.outputs.at("out") == c.outputs.at("out"));
  CHECK(r.stats["cycles"].get<std::uint64_t>() < c.stats["cycles"].get<std::uint64_t>());
  // Not when the reshape's output is read after the input's later reader (a slice after a matmul here): it could
  // not be handed over back.
  json late = w;
  late["tensors"]["weights"] = tensor({32, 32}, -1, 1, 2);
  late["ops"][3] = op("matmul", {"x", "weights"}, "out");
  late["ops"].push_back(op("slice", {"y"}, "y2", {{"starts", {0}}, {"ends", {32}}, {"axes", {0}}}));
  late["outputs"] = {"out", "y2", "zb"};
  const FusedGraph kept_copy = fuse(test::graph_of(late), arch, StagingPolicy::kMethod);
  CHECK_FALSE(kept_copy.graph.find("x:back").has_value());
  // Two reshapes of one input, a tensor already named x:back: one reshape back, under a name of its own.
  json twice = w;
  twice["tensors"]["x:back"] = tensor({1}, 0, 1, 3);
  twice["ops"].insert(twice["ops"].begin() + 2, op("reshape", {"x"}, "y3", {{"shape", {32, 2, 32}}}));
  twice["ops"].push_back(op("reshape", {"y3"}, "out3", {{"shape", {2048}}}));
  twice["ops"].push_back(op("add", {"x:back", "x:back"}, "out4"));
  twice["outputs"] = {"out", "out3", "out4"};
  const Graph g2 = test::graph_of(twice);
  const FusedGraph f2 = fuse(g2, arch, StagingPolicy::kMethod);
  CHECK(f2.graph.find("x:back2").has_value());
  CHECK_FALSE(f2.graph.find("x:back3").has_value());
  Machine m1(arch), m2(arch);
  const ExecutionResult folded2 = execute(f2.graph, m1), plain2 = execute(g2, m2);
  CHECK(folded2.outputs == plain2.outputs);
}
