// An attention kernel placed by heads: the fused q/k/v projection's columns ordered by head, so that a split of the
// projection by columns leaves each core group its heads' q, k and v, and the attention kernel cut by heads reads
// them in its group's memory and writes its heads' Y into one tensor. Every value stays the same.
#include <catch2/catch.hpp>

#include "fusion_support.hpp"
#include "ldmsim/graph/split.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"

using namespace ldmsim;
using fusion_cases::op;
using fusion_cases::tensor;
using nlohmann::json;

namespace {

/// One self-attention block as torch exports nn.MultiheadAttention: x [tokens, 1, hidden] times the fused in-
/// projection (+ bias), q, k and v sliced from it and split into heads, softmax(q kt * scale + mask) v, the heads
/// merged and the out-projection.
json self_attention(std::uint64_t tokens, std::uint64_t heads, std::uint64_t dim, bool projection_read_twice = false,
                    bool constant_weights = true) {
  const std::uint64_t width = heads * dim;
  const auto part = [&](std::uint64_t k) {
    return json{{"starts", {k * width}}, {"ends", {(k + 1) * width}}, {"axes", {2}}};
  };
  const json shape = {tokens, heads, dim};
  json w;
  w["name"] = "self_attention";
  w["tensors"] = {{"x", tensor({tokens, 1, width}, -1, 1, 1)}, {"w_in", tensor({width, 3 * width}, -0.1, 0.1, 2)},
                  {"b_in", tensor({3 * width}, -0.1, 0.1, 3)}, {"mask", tensor({heads, 1, tokens}, -4, 0, 4)},
                  {"scale", fusion_cases::scalar(0.125)},      {"w_out", tensor({width, width}, -0.1, 0.1, 5)}};
  w["ops"] = {op("matmul", {"x", "w_in"}, "p0"),
              op("add", {"p0", "b_in"}, "proj"),
              op("slice", {"proj"}, "q0", part(0)),
              op("reshape", {"q0"}, "q1", {{"shape", shape}}),
              op("transpose", {"q1"}, "q", {{"perm", {1, 0, 2}}}),
              op("slice", {"proj"}, "k0", part(1)),
              op("reshape", {"k0"}, "k1", {{"shape", shape}}),
              op("transpose", {"k1"}, "kt", {{"perm", {1, 2, 0}}}),
              op("slice", {"proj"}, "v0", part(2)),
              op("reshape", {"v0"}, "v1", {{"shape", shape}}),
              op("transpose", {"v1"}, "v", {{"perm", {1, 0, 2}}}),
              op("matmul", {"q", "kt"}, "scores"),
              op("mul", {"scores", "scale"}, "scaled"),
              op("add", {"scaled", "mask"}, "masked"),
              op("softmax", {"masked"}, "probs", {{"axis", -1}}),
              op("matmul", {"probs", "v"}, "y"),
              op("transpose", {"y"}, "merged", {{"perm", {1, 0, 2}}}),
              op("reshape", {"merged"}, "flat", {{"shape", {tokens, width}}}),
              op("matmul", {"flat", "w_out"}, "out")};
  w["outputs"] = {"out"};
  if (projection_read_twice) w["outputs"].push_back("proj");
  // The model's constants, as ONNX initializers are (a weight given at run time keeps its order).
  for (const char* t : {"w_in", "b_in", "w_out"}) w["tensors"][t]["constant"] = constant_weights;
  return w;
}

const OpNode& only(const Graph& g, const std::string& type) {
  const auto it = std::find_if(g.ops().begin(), g.ops().end(), [&](const OpNode& o) { return o.type == type; });
  REQUIRE(it != g.ops().end());
  return *it;
}

/// The stats of the run's first op of `type`, or nullptr.
const json* first_op(const ExecutionResult& r, const std::string& type) {
  for (const json& o : r.stats["ops"])
    if (o["type"] == type) return &o;
  return nullptr;
}

ExecutionResult run(const Graph& fused, const Arch& arch, std::string_view split,
                    SplitRounding rounding = SplitRounding::kAlign) {
  ExecuteOptions options;
  options.split.enabled = split != "off";
  options.split.cost_aware = split == "auto";
  options.split.rounding = rounding;
  Machine machine(arch);
  return execute(fused, machine, options);
}

}  // namespace

TEST_CASE("the fused q/k/v projection of an attention kernel is ordered by head, with the same values",
          "[graph][fusion][attention]") {
  const Arch arch = Arch::preset("sw26010pro");
  const Graph g = test::graph_of(self_attention(32, 4, 16));
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(f.head_major.size() == 1);
  CHECK(f.head_major[0].heads == 4);
  CHECK_THAT(f.describe(g), Catch::Contains("reads its 4 heads side by side") &&
                                Catch::Contains("weight and bias columns ordered by head"));
  // Head h's q, k and v are columns [48h, 48h + 48) of the reordered projection, in that order: its column 48 is
  // head 1's first q column (16 before), 16 head 0's first k column (64 before), 32 head 0's first v column (128).
  const SharedHalves before = initial_values(g.tensor(*g.find("w_in")));
  const SharedHalves after = initial_values(f.graph.tensor(*f.graph.find("w_in")));
  const std::uint64_t columns = 192;
  for (const std::uint64_t row : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{63}}) {
    CHECK(after.data()[row * columns + 48] == before.data()[row * columns + 16]);    // head 1's q, first column
    CHECK(after.data()[row * columns + 16] == before.data()[row * columns + 64]);    // head 0's k
    CHECK(after.data()[row * columns + 32] == before.data()[row * columns + 128]);   // head 0's v
    CHECK(after.data()[row * columns + 191] == before.data()[row * columns + 191]);  // head 3's v, last column
  }
  const SharedHalves bias = initial_values(f.graph.tensor(*f.graph.find("b_in")));
  CHECK(bias.data()[48] == initial_values(g.tensor(*g.find("b_in"))).data()[16]);
  // The same outputs as the projection in its own order, in every placement.
  FusionOptions own_order;
  own_order.head_major = false;
  const FusedGraph kept = fuse(g, arch, StagingPolicy::kMethod, own_order);
  CHECK(kept.head_major.empty());
  const ExecutionResult reordered = run(f.graph, arch, "off"), plain = run(kept.graph, arch, "off");
  CHECK(reordered.outputs.at("out") == plain.outputs.at("out"));
  CHECK(run(f.graph, arch, "auto").outputs.at("out") == plain.outputs.at("out"));
  // One core group: nothing to place by heads, nothing reordered.
  Arch one = arch;
  one.core_groups = 1;
  CHECK(fuse(g, one, StagingPolicy::kMethod).head_major.empty());
  // A projection read by another op too keeps its order, and so does a weight that may be given at run time.
  CHECK(fuse(test::graph_of(self_attention(32, 4, 16, true)), arch, StagingPolicy::kMethod).head_major.empty());
  CHECK(fuse(test::graph_of(self_attention(32, 4, 16, false, false)), arch, StagingPolicy::kMethod).head_major.empty());
}

TEST_CASE("an attention kernel's batches are ranges of its tensors' axes", "[graph][fusion][attention]") {
  const Arch arch = Arch::preset("sw26010pro");
  const FusedGraph f = fuse(test::graph_of(self_attention(32, 6, 16)), arch, StagingPolicy::kMethod);
  const OpNode& attention = only(f.graph, "attention");
  REQUIRE(attention_batches(*attention.bound) == 6);
  // Heads 2 and 3 of [32, 1, 288] ordered by head (48 columns each), the mask's rows 2 and 3, Y's heads [2, 4) of
  // [32, 6, 16].
  const auto regions = attention_batch_regions(*attention.bound, 2, 4);
  REQUIRE(regions);
  REQUIRE(regions->size() == attention.inputs.size() + 1);
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK_FALSE((*regions)[k].whole);
    CHECK((*regions)[k].axis == 2);
    CHECK((*regions)[k].begin == 96);
    CHECK((*regions)[k].end == 192);
  }
  const AttentionRegion& y = regions->back();
  CHECK((!y.whole && y.axis == 1 && y.begin == 2 && y.end == 4));
  const auto mask = std::find_if(attention.inputs.begin(), attention.inputs.end(),
                                 [&](std::size_t t) { return f.graph.tensor(t).name == "mask"; });
  REQUIRE(mask != attention.inputs.end());
  const AttentionRegion& m = (*regions)[static_cast<std::size_t>(mask - attention.inputs.begin())];
  CHECK((!m.whole && m.axis == 0 && m.begin == 2 && m.end == 4));
  CHECK_FALSE(attention_batch_regions(*attention.bound, 4, 4));  // no batches
  CHECK_FALSE(attention_batch_regions(*attention.bound, 5, 7));  // past the last
  // The split rule offers the heads to the cost-aware choice only.
  const std::vector<SplitAxis> axes = split_axes(f.graph, attention);
  REQUIRE(axes.size() == 1);
  CHECK(axes[0].rule == kHeadsRule);
  CHECK(axes[0].extent == 6);
  CHECK(axes[0].cost_aware_only);
}

TEST_CASE("the cost-aware placement runs a BERT-base attention by heads where the projection holds them",
          "[graph][fusion][attention][split]") {
  // 12 heads of 64 on 128 tokens on sw26010pro's six groups: the projection cut by columns leaves group g heads
  // 2g and 2g + 1 (q, k and v side by side), which the attention's piece on g reads in g's memory; its Y goes to
  // one tensor in group 0's memory, which the out-projection reads whole.
  const Arch arch = Arch::preset("sw26010pro");
  const Graph g = test::graph_of(self_attention(128, 12, 64));
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(f.head_major.size() == 1);
  const ExecutionResult placed = run(f.graph, arch, "auto"), whole = run(f.graph, arch, "off");
  CHECK(placed.outputs.at("out") == whole.outputs.at("out"));
  const json* attention = first_op(placed, "attention");
  const json* projection = first_op(placed, "matmul");
  REQUIRE(attention != nullptr);
  REQUIRE(projection != nullptr);
  CHECK((*attention)["placement"]["placement"] == "heads");
  CHECK((*attention)["placement"]["cost_class"] == "attention");
  CHECK((*projection)["placement"]["placement"] == "cols");
  // Every group reads its heads in its own memory; groups 1-5 write their Y (2 heads x 128 x 64 fp16) to group 0's.
  REQUIRE((*attention)["groups"].size() == 6);
  CHECK((*attention)["groups"][0]["dma_remote_bytes"] == 0);
  for (std::size_t group = 1; group < 6; ++group) {
    CAPTURE(group);
    CHECK((*attention)["groups"][group]["dma_remote_bytes"] == 2 * 128 * 64 * 2);
  }
  // The kernel's estimate chose it: within 25% of what it took.
  const double estimated = (*attention)["placement"]["estimated_cycles"].get<double>();
  const double simulated = (*attention)["cycles"].get<double>();
  CHECK(estimated == Approx(simulated).epsilon(0.25));
  // And it beats the whole op reading every head from group 0's memory over the links.
  const json* whole_attention = first_op(whole, "attention");
  REQUIRE(whole_attention != nullptr);
  CHECK(simulated < (*whole_attention)["cycles"].get<double>());
}

TEST_CASE("heads that do not divide the core groups: rounded splits pad no head", "[graph][fusion][attention][split]") {
  // 16 heads on six groups: padded pieces of 3 reach [15, 18), past the last head (the padding reads nothing).
  const Arch arch = Arch::preset("sw26010pro");
  const FusedGraph f = fuse(test::graph_of(self_attention(32, 16, 8)), arch, StagingPolicy::kMethod);
  const OpNode& attention = only(f.graph, "attention");
  SplitPlan plan;
  plan.options.enabled = true;
  plan.options.rounding = SplitRounding::kPad;
  plan.memories = arch.core_groups;
  plan.cores = arch.total_cores();
  const std::vector<SplitAxis> axes = split_axes(f.graph, attention);
  REQUIRE(axes.size() == 1);
  const auto s = split_along(f.graph, attention, axes[0], plan, arch);
  REQUIRE(s);
  CHECK(s->blocks.back() == std::make_pair(std::uint64_t{15}, std::uint64_t{16}));
  const ExecutionResult whole = run(f.graph, arch, "off");
  for (const SplitRounding rounding : {SplitRounding::kPad, SplitRounding::kExact, SplitRounding::kAlign}) {
    CHECK(run(f.graph, arch, "auto", rounding).outputs.at("out") == whole.outputs.at("out"));
  }
}
