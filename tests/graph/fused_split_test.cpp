// Fused kernels cut by rows across core groups (rule fused-rows, docs/splitting.md): which axes are offered, what
// each piece reads, the pieces' outputs against the whole kernel's, and their host reference.
#include <catch2/catch.hpp>

#include "fusion_support.hpp"
#include "ldmsim/graph/split.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

/// x [a, b, c] + r, then a LayerNorm over the last axis with scale and bias: one fused kernel whose frame is
/// [rows a x b | K c].
Graph residual_layer_norm(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  json w = json::parse(R"({
    "tensors": {"x": {"init": {"normal": [0, 1], "seed": 1}}, "r": {"init": {"normal": [0, 1], "seed": 2}},
                "s": {"init": {"uniform": [0.5, 1.5], "seed": 3}, "constant": true},
                "t": {"init": {"uniform": [-0.5, 0.5], "seed": 4}, "constant": true}},
    "ops": [{"type": "add", "inputs": ["x", "r"], "outputs": ["h"]},
            {"type": "layer_norm", "inputs": ["h", "s", "t"], "outputs": ["y"], "attrs": {"axis": -1}}],
    "outputs": ["y"]})");
  for (const char* t : {"x", "r"}) w["tensors"][t]["shape"] = {a, b, c};
  w["tensors"]["s"]["shape"] = {c};
  w["tensors"]["t"]["shape"] = {c};
  return test::graph_of(w);
}

/// x [1, c, h, w] * sigmoid(g [1, c, 1, 1]): a squeeze-excitation's scale, point-wise with a broadcast operand.
Graph excitation_scale(std::uint64_t c, std::uint64_t hw) {
  json w = json::parse(R"({
    "tensors": {"x": {"init": {"normal": [0, 1], "seed": 5}}, "g": {"init": {"normal": [0, 1], "seed": 6}}},
    "ops": [{"type": "sigmoid", "inputs": ["g"], "outputs": ["s"]},
            {"type": "mul", "inputs": ["x", "s"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  w["tensors"]["x"]["shape"] = {1, c, hw, hw};
  w["tensors"]["g"]["shape"] = {1, c, 1, 1};
  return test::graph_of(w);
}

ExecutionResult run_split(const Graph& g, const Arch& arch, bool split, unsigned threads = 1) {
  MachineOptions options;
  options.threads = threads;
  Machine m(arch, options);
  ExecuteOptions exec;
  exec.split = {split, SplitRounding::kAlign};
  return execute(g, m, exec);
}

const json& op_named(const ExecutionResult& r, const std::string& type) {
  for (const json& op : r.stats["ops"]) {
    if (op["type"] == type) return op;
  }
  throw std::logic_error("no op of type " + type);
}

}  // namespace

TEST_CASE("a fused kernel offers its row axes that every tensor holds or broadcasts", "[graph][split][fusion]") {
  const Arch arch = Arch::preset("sw26010pro");
  const FusedGraph f = fuse(residual_layer_norm(4, 30, 96), arch, StagingPolicy::kMethod);
  REQUIRE(f.graph.ops().size() == 1);
  const OpNode& op = f.graph.ops()[0];
  REQUIRE(op.type == "fused");
  const std::vector<SplitAxis> axes = split_axes(f.graph, op);
  REQUIRE(axes.size() == 2);  // the rows a and b; K (the normalised axis) is never cut
  CHECK(axes[0].rule == kFusedRowsRule);
  CHECK(axes[0].axis == 0);
  CHECK(axes[0].extent == 4);
  CHECK(axes[1].axis == 1);
  CHECK(axes[1].extent == 30);
  CHECK(axes[1].input_axis == 1);
  // A piece of b's rows [10, 20): x, r and y cut alike; the scale and bias (broadcast over rows) whole.
  const PieceWork w = piece_work(f.graph, op, axes[1], 10, 20, nullptr);
  for (std::size_t k = 0; k < w.regions.size(); ++k) {
    const std::string& name = f.graph.tensor(k < op.inputs.size() ? op.inputs[k] : op.outputs[0]).name;
    CAPTURE(name);
    if (name == "s" || name == "t") {
      CHECK(w.regions[k].whole);
    } else {
      CHECK_FALSE(w.regions[k].whole);
      CHECK(w.regions[k].axis == 1);
      CHECK((w.regions[k].begin == 10 && w.regions[k].end == 20));
    }
  }
}

TEST_CASE("a fused batch norm is not cut along its channels, whose parameters it reads as [1, C, 1, 1]",
          "[graph][split][fusion]") {
  const FusedProgram* none = fused_program(*test::graph_of(json::parse(R"({
    "tensors": {"x": {"shape": [4, 8], "init": {"normal": [0, 1], "seed": 1}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})"))
                                                .ops()[0]
                                                .bound);
  CHECK(none == nullptr);  // an op that is not fused has no program
  FusedProgram p;
  p.frame = FusionFrame{Shape{2, 16, 7, 7}, 4, 4};
  p.values = {{"x", {2, 16, 7, 7}}, {"mean", {1, 16, 1, 1}}, {"y", {2, 16, 7, 7}}};
  p.inputs = {0, 1};
  p.outputs = {2};
  const std::vector<Shape> own{Shape{2, 16, 7, 7}, Shape{16}, Shape{2, 16, 7, 7}};
  CHECK(fused_rows_cut(p, own, 0));        // samples: the [C] vector broadcasts along them
  CHECK_FALSE(fused_rows_cut(p, own, 1));  // channels: [C] is not [1, C, 1, 1] by position
  const std::vector<Shape> aligned{Shape{2, 16, 7, 7}, Shape{16, 1, 1}, Shape{2, 16, 7, 7}};
  CHECK(fused_rows_cut(p, aligned, 1));
  CHECK(fused_tensor_axis(p, Shape{16, 1, 1}, 1, 1) == std::optional<std::size_t>{0});
  CHECK_FALSE(fused_rows_cut(p, aligned, 4 /* not a row axis */));
}

TEST_CASE("a fused kernel split by rows gives the whole kernel's outputs bit for bit on any threads",
          "[graph][split][fusion]") {
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const Arch arch = Arch::preset(preset);
    // More rows than a core group has cores, so the whole kernel deals them to every group and reads remotely.
    for (const Graph& g : {residual_layer_norm(1, 150, 96), excitation_scale(96, 14)}) {
      const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
      REQUIRE(f.graph.ops().size() == 1);
      const ExecutionResult off = run_split(f.graph, arch, false), on = run_split(f.graph, arch, true);
      const json& op = op_named(on, "fused");
      REQUIRE(op.contains("split"));
      CHECK(op["split"]["rule"] == kFusedRowsRule);
      CHECK(op["split"]["groups"].size() == arch.core_groups);
      CHECK(on.outputs.at("y") == off.outputs.at("y"));
      CHECK(op_named(off, "fused")["dma_remote_bytes"].get<std::uint64_t>() > 0);
      const ExecutionResult four = run_split(f.graph, arch, true, 4);
      CHECK(four.outputs.at("y") == on.outputs.at("y"));
      CHECK(four.stats["cycles"] == on.stats["cycles"]);
    }
  }
}

TEST_CASE("a fused piece's reference evaluates the program on the piece's rows", "[graph][split][fusion]") {
  const Arch arch = Arch::preset("sw26010pro");
  const Graph g = residual_layer_norm(2, 9, 40);
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  const OpNode& op = f.graph.ops()[0];
  const FusedProgram* program = fused_program(*op.bound);
  REQUIRE(program != nullptr);
  // The inputs, and the whole kernel's reference (its members' references composed).
  std::vector<HostTensor> in;
  for (std::size_t t : op.inputs) {
    const TensorNode& node = f.graph.tensor(t);
    HostTensor h{node.shape, std::vector<float>(node.shape.elements())};
    for (std::size_t i = 0; i < h.data.size(); ++i) h.data[i] = static_cast<float>((i * 37 + t * 11) % 23) / 7 - 1.5f;
    in.push_back(std::move(h));
  }
  const std::vector<HostTensor> whole = op.bound->reference(in);
  Arch one = arch;
  one.core_groups = 1;
  // Rows [3, 7) of frame axis 1: x and r sliced there, the scale and bias whole.
  const auto piece = fused_rows(*op.bound, 1, 3, 7, one);
  REQUIRE(piece != nullptr);
  CHECK(piece->output_shapes()[0] == Shape({2, 4, 40}));
  std::vector<HostTensor> piece_in;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (in[k].shape.rank() == 1) {
      piece_in.push_back(in[k]);
      continue;
    }
    HostTensor h{Shape{2, 4, 40}, {}};
    for (std::uint64_t a = 0; a < 2; ++a)
      for (std::uint64_t b = 3; b < 7; ++b)
        for (std::uint64_t c = 0; c < 40; ++c) h.data.push_back(in[k].data[(a * 9 + b) * 40 + c]);
    piece_in.push_back(std::move(h));
  }
  const std::vector<HostTensor> part = piece->reference(piece_in);
  REQUIRE(part.size() == 1);
  REQUIRE(part[0].data.size() == 2 * 4 * 40);
  const Tolerance tol = op.bound->tolerance();
  std::size_t i = 0;
  for (std::uint64_t a = 0; a < 2; ++a)
    for (std::uint64_t b = 3; b < 7; ++b)
      for (std::uint64_t c = 0; c < 40; ++c, ++i) {
        const float want = whole[0].data[(a * 9 + b) * 40 + c];
        CHECK(std::abs(part[0].data[i] - want) <= tol.abs + tol.rel * std::abs(want));
      }
  CHECK_THROWS_AS(fused_rows(*op.bound, 2, 0, 1, one), ConfigError);   // K is not a row axis
  CHECK_THROWS_AS(fused_rows(*op.bound, 1, 5, 12, one), ConfigError);  // past the rows
}

TEST_CASE("the cost-aware choice cuts a fused kernel by rows where its neighbours' rows make that cheaper",
          "[graph][split][auto][fusion]") {
  // A 1x1 conv, SiLU (one fused kernel) and a 1x1 conv on a 112x112 image: on sw26010 the three are cut by the same
  // rows; a residual LayerNorm alone on sw26010pro stays whole. Either way the outputs are --split off's.
  json w = json::parse(R"({
    "tensors": {"x": {"shape": [1, 32, 112, 112], "init": {"uniform": [-1, 1], "seed": 1}},
                "w1": {"shape": [96, 32, 1, 1], "init": {"uniform": [-0.1, 0.1], "seed": 2}, "constant": true},
                "w2": {"shape": [32, 96, 1, 1], "init": {"uniform": [-0.1, 0.1], "seed": 3}, "constant": true}},
    "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["c"]},
            {"type": "sigmoid", "inputs": ["c"], "outputs": ["s"]},
            {"type": "mul", "inputs": ["c", "s"], "outputs": ["m"]},
            {"type": "conv", "inputs": ["m", "w2"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  struct Case {
    Graph graph;
    const char* preset;
    std::size_t fused;
    bool rows;
  };
  const std::vector<Case> cases{{test::graph_of(w), "sw26010", 1, true},
                                {residual_layer_norm(1, 384, 256), "sw26010pro", 0, false}};
  for (const Case& c : cases) {
    INFO(c.preset);
    const Arch arch = Arch::preset(c.preset);
    const FusedGraph f = fuse(c.graph, arch, StagingPolicy::kMethod);
    REQUIRE(f.graph.ops()[c.fused].type == "fused");
    SplitOptions options{.enabled = true};
    options.cost_aware = true;
    const SplitPlan plan = plan_split(f.graph, arch, options);
    const bool cut = plan.ops[c.fused] && plan.ops[c.fused]->axis.rule == kFusedRowsRule;
    CHECK(cut == c.rows);
    CHECK((plan.choices[c.fused].placement.rfind(kFusedRowsRule, 0) == 0) == c.rows);
    MachineOptions one;
    one.threads = 1;
    Machine m(arch, one), n(arch, one);
    ExecuteOptions automatic, off;
    automatic.split = options;
    const ExecutionResult chosen = execute(f.graph, m, automatic), whole = execute(f.graph, n, off);
    CHECK(chosen.outputs.at("y") == whole.outputs.at("y"));
  }
}
