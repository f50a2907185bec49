// The fusion pass's folds into stores (docs/fusion.md § Folds into the store): a relu or clip that alone reads a
// conv's, gemm's, matmul's or fc's output, and an add of a residual that alone reads a conv's, run as that op's
// store; the outputs are the bits of the ops run apart, with fewer cycles and DMA bytes; ops whose input is read
// elsewhere, is a graph output, or comes from another op stay; folded ops split across core groups as before.
#include <catch2/catch.hpp>
#include <filesystem>
#include <random>

#include "fusion_support.hpp"
#include "ldmsim/graph/split.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

struct Runs {
  FusedGraph folded;
  ExecutionResult apart, together;
};

Runs run_both_ways(const Graph& g, const Arch& arch, const ExecuteOptions& options = {}) {
  Runs r{fuse(g, arch, StagingPolicy::kMethod), {}, {}};
  Machine apart(arch), together(arch);
  r.apart = execute(g, apart, options);
  r.together = execute(r.folded.graph, together, options);
  return r;
}

/// Every output of both runs, bit for bit.
void check_same_bits(const Runs& r) {
  REQUIRE(r.apart.outputs.size() == r.together.outputs.size());
  for (const auto& [name, values] : r.apart.outputs) {
    CAPTURE(name);
    const auto& folded = r.together.outputs.at(name);
    REQUIRE(folded.size() == values.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < values.size(); ++i) differ += folded[i].bits != values[i].bits ? 1U : 0U;
    CHECK(differ == 0);
  }
}

std::uint64_t cycles(const ExecutionResult& r) {
  return r.stats["cycles"].get<std::uint64_t>();
}
std::uint64_t dma_bytes(const ExecutionResult& r) {
  return r.stats["dma_bytes"].get<std::uint64_t>();
}

/// conv (algorithm `algo`) -> `activation` (relu or clip with `bounds`) -> max_pool; the activation's output is
/// read by the pool only. The input spans both signs and is 3x as wide as the clip bounds below.
json conv_then(const std::string& algo, const std::string& activation, const json& bounds = nullptr) {
  json w = json::parse(R"({
    "name": "conv_act",
    "tensors": {"x": {"shape": [2, 5, 13, 11], "init": {"uniform": [-3, 3], "seed": 1}},
                "w": {"shape": [7, 5, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 2}},
                "b": {"shape": [7], "init": {"uniform": [-0.5, 0.5], "seed": 3}}},
    "ops": [{"type": "conv", "inputs": ["x", "w", "b"], "outputs": ["c"], "attrs": {"pad": 1}},
            {"inputs": ["c"], "outputs": ["a"]},
            {"type": "max_pool", "inputs": ["a"], "outputs": ["y"], "attrs": {"kernel": 2, "stride": 2}}],
    "outputs": ["y"]})");
  w["ops"][0]["attrs"]["algo"] = algo;
  w["ops"][1]["type"] = activation;
  if (!bounds.is_null()) w["ops"][1]["attrs"] = bounds;
  return w;
}

}  // namespace

TEST_CASE("a relu after a conv folds into it: one op fewer, the same bits, fewer cycles and bytes", "[graph][fusion]") {
  const Arch arch = test::small_arch();
  for (const char* algo : {"implicit-precomp", "direct", "implicit", "im2col"}) {
    CAPTURE(algo);
    const Graph g = test::graph_of(conv_then(algo, "relu"));
    const Runs r = run_both_ways(g, arch);
    REQUIRE(r.folded.folds.size() == 1);
    CHECK(r.folded.folds[0].op == 0);
    CHECK(r.folded.folds[0].activation == 1);
    REQUIRE(r.folded.graph.ops().size() == 2);
    const OpNode& conv = r.folded.graph.ops()[0];
    CHECK(conv.type == "conv");
    CHECK(conv.layer() == "conv#0+relu#1");
    CHECK(conv.attrs["activation"] == json{{"type", "relu"}});
    CHECK(conv.attrs["algo"] == algo);  // the producer's own attributes kept
    CHECK(r.folded.folds[0].kernel == conv.label());
    CHECK(r.together.stats["ops"][0]["metrics"]["activation"] == json{{"type", "relu"}});
    check_same_bits(r);
    CHECK(dma_bytes(r.together) < dma_bytes(r.apart));
    CHECK_THAT(r.folded.describe(g), Catch::Matchers::Contains("folded into conv#0's store: relu#1"));
    // Cycles on a real preset: the test arch's cores do one flop a cycle, so there a relu spread over its cores
    // costs about what the same relu costs in the conv's store.
    const Runs real = run_both_ways(g, Arch::preset("sw26010pro"));
    check_same_bits(real);
    CHECK(cycles(real.together) < cycles(real.apart));
  }
}

TEST_CASE("clip folds with its bounds, fp16 values or not", "[graph][fusion]") {
  const Arch arch = test::small_arch();
  for (const json& bounds : {json{{"min", 0}, {"max", 6}}, json{{"min", -0.1}, {"max", 0.30001}}, json{{"max", 0.5}}}) {
    CAPTURE(bounds.dump());
    const Graph g = test::graph_of(conv_then("implicit-precomp", "clip", bounds));
    const Runs r = run_both_ways(g, arch);
    REQUIRE(r.folded.folds.size() == 1);
    json expected = bounds;
    expected["type"] = "clip";
    CHECK(r.folded.graph.ops()[0].attrs["activation"] == expected);
    check_same_bits(r);
  }
}

TEST_CASE("gemm, matmul and fc take a folded activation too", "[graph][fusion]") {
  const Graph g = test::graph_of(json::parse(R"({
    "name": "mlp",
    "tensors": {"x": {"shape": [6, 40], "init": {"uniform": [-2, 2], "seed": 1}},
                "w1": {"shape": [40, 33], "init": {"uniform": [-0.3, 0.3], "seed": 2}},
                "b1": {"shape": [33], "init": {"uniform": [-0.3, 0.3], "seed": 3}},
                "w2": {"shape": [33, 17], "init": {"uniform": [-0.3, 0.3], "seed": 4}},
                "w3": {"shape": [9, 17], "init": {"uniform": [-0.3, 0.3], "seed": 5}}},
    "ops": [{"type": "gemm", "inputs": ["x", "w1", "b1"], "outputs": ["h1"]},
            {"type": "relu", "inputs": ["h1"], "outputs": ["r1"]},
            {"type": "matmul", "inputs": ["r1", "w2"], "outputs": ["h2"]},
            {"type": "clip", "inputs": ["h2"], "outputs": ["r2"], "attrs": {"min": -0.25, "max": 0.75}},
            {"type": "fc", "inputs": ["r2", "w3"], "outputs": ["h3"]},
            {"type": "relu", "inputs": ["h3"], "outputs": ["y"]}],
    "outputs": ["y"]})"));
  const Runs r = run_both_ways(g, test::small_arch());
  CHECK(r.folded.folds.size() == 3);
  REQUIRE(r.folded.graph.ops().size() == 3);
  for (const OpNode& op : r.folded.graph.ops()) CHECK(op.attrs.contains("activation"));
  check_same_bits(r);
  CHECK(cycles(r.together) < cycles(r.apart));
}

TEST_CASE("an activation stays apart when its input is needed elsewhere or comes from another op", "[graph][fusion]") {
  const Graph g = test::graph_of(json::parse(R"({
    "name": "keep",
    "tensors": {"x": {"shape": [1, 4, 8, 8], "init": {"uniform": [-2, 2], "seed": 1}},
                "w": {"shape": [4, 4, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 2}}},
    "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["c1"], "attrs": {"pad": 1}},
            {"type": "relu", "inputs": ["c1"], "outputs": ["r1"]},
            {"type": "add", "inputs": ["c1", "r1"], "outputs": ["s1"]},
            {"type": "conv", "inputs": ["s1", "w"], "outputs": ["c2"], "attrs": {"pad": 1}},
            {"type": "relu", "inputs": ["c2"], "outputs": ["r2"]},
            {"type": "conv", "inputs": ["r2", "w"], "outputs": ["c3"],
             "attrs": {"pad": 1, "activation": {"type": "clip", "min": -1, "max": 1}}},
            {"type": "relu", "inputs": ["c3"], "outputs": ["r3"]},
            {"type": "sigmoid", "inputs": ["r3"], "outputs": ["g"]},
            {"type": "relu", "inputs": ["g"], "outputs": ["y"]}],
    "outputs": ["y", "c2"]})"));
  // c1 is read by the add too; c2 is a graph output; conv 5 has an activation already; relu 8 reads a sigmoid.
  const FusedGraph f = fuse(g, test::small_arch(), StagingPolicy::kMethod);
  CHECK(f.folds.empty());
  for (const OpNode& op : f.graph.ops()) {
    if (op.attrs.is_object() && op.attrs.contains("activation")) CHECK(op.attrs["activation"]["type"] == "clip");
  }
}

TEST_CASE("an activation given in a workload runs as the op's store", "[graph][fusion]") {
  json with = conv_then("direct", "relu");
  with["ops"][0]["attrs"]["activation"] = "relu";
  with["ops"].erase(1);
  with["ops"][1]["inputs"] = {"c"};
  const Graph given = test::graph_of(with);
  const Graph apart = test::graph_of(conv_then("direct", "relu"));
  const Arch arch = test::small_arch();
  Machine m1(arch), m2(arch);
  CHECK(execute(given, m1).outputs.at("y") == execute(apart, m2).outputs.at("y"));
  json bad = with;
  bad["ops"][0]["attrs"]["activation"] = "tanh";
  CHECK_THROWS_WITH(test::graph_of(bad),
                    Catch::Matchers::Contains("ops[0].attrs.activation") && Catch::Matchers::Contains("tanh"));
}

TEST_CASE("a folded conv splits across core groups with the outputs of the unsplit run", "[graph][fusion][split]") {
  const Graph g = test::graph_of(conv_then("implicit-precomp", "relu"));
  const Arch arch = Arch::preset("sw26010pro");
  ExecuteOptions split;
  split.split = {true, SplitRounding::kExact};
  const Runs r = run_both_ways(g, arch, split);
  REQUIRE(r.folded.folds.size() == 1);
  CHECK(r.together.stats["ops"][0]["split"]["rule"].is_string());
  check_same_bits(r);
}

TEST_CASE("a reduction split activates the whole sum, not each group's partial", "[graph][fusion][split]") {
  // The splitting method's worked example (examples/split/method_mlp.json) with a relu: its pieces sum halves of
  // the inner dimension, so the relu must wait for the reduction tree.
  const Graph g = test::graph_of(json::parse(R"({
    "name": "method_mlp_relu",
    "tensors": {"x": {"shape": [1, 1000], "init": {"normal": [0, 1], "seed": 1}, "dtype": "f32", "constant": false},
                "w": {"shape": [1000, 4], "init": {"uniform": [-0.1, 0.1], "seed": 2}, "dtype": "f32"}},
    "ops": [{"type": "matmul", "inputs": ["x", "w"], "outputs": ["h"]},
            {"type": "relu", "inputs": ["h"], "outputs": ["y"]}],
    "outputs": ["y"]})"));
  const Arch arch = Arch::load(std::filesystem::path(LDMSIM_SOURCE_DIR) / "examples/split/arch_2x2.json");
  ExecuteOptions split;
  split.split = {true, SplitRounding::kPad};
  const Runs r = run_both_ways(g, arch, split);
  REQUIRE(r.folded.folds.size() == 1);
  CHECK(r.together.stats["ops"][0]["split"]["reduction_levels"] == 2);
  check_same_bits(r);
  int zeros = 0;
  for (const f16 v : r.together.outputs.at("y")) zeros += static_cast<float>(v) == 0.0f ? 1 : 0;
  CHECK(zeros > 0);  // some sums were negative (the seed is chosen so), so the relu acted
  CHECK(zeros < 4);
}

TEST_CASE("folds keep every attribute of the producer: grouped conv, batch 3, gemm with transB, alpha and beta",
          "[graph][fusion]") {
  const Graph g = test::graph_of(json::parse(R"({
    "name": "attrs",
    "tensors": {"x": {"shape": [3, 6, 9, 7], "init": {"uniform": [-2, 2], "seed": 1}},
                "w": {"shape": [4, 3, 3, 2], "init": {"uniform": [-0.4, 0.4], "seed": 2}},
                "a": {"shape": [5, 12], "init": {"uniform": [-2, 2], "seed": 3}},
                "b": {"shape": [12, 12], "init": {"uniform": [-0.5, 0.5], "seed": 4}},
                "c": {"shape": [12], "init": {"uniform": [-1, 1], "seed": 5}}},
    "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["c1"],
             "attrs": {"groups": 2, "stride": [2, 1], "pad": [1, 0, 2, 1], "dilation": [1, 2]}},
            {"type": "clip", "inputs": ["c1"], "outputs": ["y1"], "attrs": {"min": -0.5, "max": 0.25}},
            {"type": "gemm", "inputs": ["a", "b", "c"], "outputs": ["g"],
             "attrs": {"transB": 1, "alpha": 0.7, "beta": -1.3}},
            {"type": "relu", "inputs": ["g"], "outputs": ["y2"]}],
    "outputs": ["y1", "y2"]})"));
  const Runs r = run_both_ways(g, test::small_arch());
  REQUIRE(r.folded.folds.size() == 2);
  CHECK(r.folded.graph.ops()[0].attrs["groups"] == 2);
  CHECK(r.folded.graph.ops()[1].attrs["transB"] == 1);
  check_same_bits(r);
}

TEST_CASE("an op added already bound, without its attributes, takes no fold", "[graph][fusion]") {
  Graph g;
  g.add_input("x", Shape{1, 4, 6, 6}, TensorInit{.kind = TensorInit::Kind::kUniform, .a = -1, .b = 1, .seed = 1});
  g.add_input("w", Shape{4, 4, 3, 3}, TensorInit{.kind = TensorInit::Kind::kUniform, .a = -1, .b = 1, .seed = 2});
  const json pad = {{"pad", 1}};
  const std::vector<Shape> shapes{Shape{1, 4, 6, 6}, Shape{4, 4, 3, 3}};
  g.add_bound_op("conv", {"x", "w"}, {"c"}, test::registry().bind("conv", JsonField(pad, "test"), shapes));
  g.add_op(test::registry(), "relu", {"c"}, {"y"}, JsonField(json(), "test"));
  g.mark_output("y");
  // Rebinding it from its (unknown) attributes would drop the padding; the shapes would not even match.
  CHECK(fuse(g, test::small_arch(), StagingPolicy::kMethod).folds.empty());
}

namespace {

/// x -> conv (`algo`) -> add with the skip s (the conv's output first or second) -> relu (or not), the residual
/// block's tail; x and s hold NaNs of different payloads and signs (one where both addends are NaN, so the add's
/// operand order shows), infinities and zeros of both signs.
Graph residual_block(const std::string& algo, bool conv_first, bool relu = true) {
  const auto values = [](std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<f16> v(n);
    for (f16& h : v) h = f16(u(rng));
    v[3] = f16::from_bits(0x7e01), v[40] = f16::from_bits(0xfe02), v[77] = f16::from_bits(0x7c00);
    v[90] = f16::from_bits(0x8000), v[91] = f16(-1e-7f);
    if (seed == 2) v[3] = f16::from_bits(0xfd03);  // the skip's NaN where x's NaN makes the conv's output NaN
    return v;
  };
  Graph g;
  const Shape xs{2, 6, 9, 8}, ys{2, 5, 9, 8};
  g.add_input("x", xs, TensorInit{.kind = TensorInit::Kind::kData, .data = SharedHalves(values(xs.elements(), 1))});
  g.add_input("s", ys, TensorInit{.kind = TensorInit::Kind::kData, .data = SharedHalves(values(ys.elements(), 2))});
  g.add_input("w", Shape{5, 6, 3, 3}, TensorInit{.kind = TensorInit::Kind::kUniform, .a = -0.3, .b = 0.3, .seed = 3});
  g.add_input("b", Shape{5}, TensorInit{.kind = TensorInit::Kind::kUniform, .a = -0.5, .b = 0.5, .seed = 4});
  const json attrs = {{"pad", 1}, {"algo", algo}};
  g.add_op(test::registry(), "conv", {"x", "w", "b"}, {"c"}, JsonField(attrs, "test"));
  const std::vector<std::string> add_inputs =
      conv_first ? std::vector<std::string>{"c", "s"} : std::vector<std::string>{"s", "c"};
  g.add_op(test::registry(), "add", add_inputs, {"a"}, JsonField(json(), "test"));
  if (!relu) {
    g.mark_output("a");
    return g;
  }
  g.add_op(test::registry(), "relu", {"a"}, {"y"}, JsonField(json(), "test"));
  g.mark_output("y");
  return g;
}

}  // namespace

TEST_CASE("a conv's residual add and relu fold into its store with the bits of the ops apart", "[graph][fusion]") {
  const Arch arch = test::small_arch();
  for (const char* algo : {"implicit-precomp", "direct", "im2col"}) {
    for (const bool conv_first : {true, false}) {
      CAPTURE(algo, conv_first);
      const Graph g = residual_block(algo, conv_first);
      const Runs r = run_both_ways(g, arch);
      REQUIRE(r.folded.folds.size() == 1);
      CHECK(r.folded.residual_folds() == 1);
      CHECK(r.folded.activation_folds() == 1);
      REQUIRE(r.folded.graph.ops().size() == 1);
      const OpNode& conv = r.folded.graph.ops()[0];
      CHECK(conv.attrs["residual"] == (conv_first ? "after" : "before"));
      CHECK(conv.layer() == "conv#0+add#1+relu#2");
      CHECK(conv.inputs.size() == 4);
      check_same_bits(r);
      CHECK(cycles(r.together) < cycles(r.apart));
      CHECK(dma_bytes(r.together) < dma_bytes(r.apart));
      const Runs no_relu = run_both_ways(residual_block(algo, conv_first, false), arch);  // NaNs reach the output
      REQUIRE(no_relu.folded.residual_folds() == 1);
      CHECK(no_relu.folded.activation_folds() == 0);
      check_same_bits(no_relu);
    }
  }
}

TEST_CASE("an add folds into the first of two convs it sums, and a broadcast add does not fold", "[graph][fusion]") {
  const Graph g = test::graph_of(json::parse(R"({
    "name": "two_convs",
    "tensors": {"x": {"shape": [1, 4, 8, 8], "init": {"uniform": [-2, 2], "seed": 1}},
                "w1": {"shape": [6, 4, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 2}},
                "w2": {"shape": [6, 4, 1, 1], "init": {"uniform": [-0.3, 0.3], "seed": 3}},
                "w3": {"shape": [6, 6, 1, 1], "init": {"uniform": [-0.3, 0.3], "seed": 5}},
                "v": {"shape": [6, 1, 1], "init": {"uniform": [-1, 1], "seed": 4}}},
    "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["c1"], "attrs": {"pad": 1}},
            {"type": "conv", "inputs": ["x", "w2"], "outputs": ["c2"]},
            {"type": "add", "inputs": ["c2", "c1"], "outputs": ["s"]},
            {"type": "relu", "inputs": ["s"], "outputs": ["r"]},
            {"type": "conv", "inputs": ["r", "w3"], "outputs": ["c3"], "attrs": {"pad": 0}},
            {"type": "add", "inputs": ["c3", "v"], "outputs": ["y"]}],
    "outputs": ["y"]})"));
  const Runs r = run_both_ways(g, test::small_arch());
  REQUIRE(r.folded.folds.size() == 1);
  CHECK(r.folded.folds[0].op == 0);  // the first conv takes the add; the second's output becomes its residual
  CHECK(r.folded.folds[0].residual_first);
  CHECK(r.folded.folds[0].activation == std::optional<std::size_t>(3));
  check_same_bits(r);
}

TEST_CASE("a folded residual conv splits across core groups with the outputs of the unsplit run",
          "[graph][fusion][split]") {
  const Graph g = residual_block("implicit-precomp", true);
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    CAPTURE(preset);
    ExecuteOptions split;
    split.split = {true, SplitRounding::kExact};
    const Runs r = run_both_ways(g, Arch::preset(preset), split);
    REQUIRE(r.folded.residual_folds() == 1);
    CHECK(r.together.stats["ops"][0]["split"]["rule"].is_string());
    check_same_bits(r);
  }
}

TEST_CASE("a bad residual attribute or input is a ConfigError naming it", "[graph][fusion]") {
  using Catch::Matchers::Contains;
  json w = json::parse(R"({
    "tensors": {"x": {"shape": [1, 2, 5, 5], "init": {"uniform": [-1, 1], "seed": 1}},
                "w": {"shape": [3, 2, 3, 3], "init": {"uniform": [-1, 1], "seed": 2}},
                "b": {"shape": [3], "init": {"value": 0}},
                "r": {"shape": [1, 3, 5, 5], "init": {"value": 1}},
                "q": {"shape": [1, 3, 4, 5], "init": {"value": 1}}},
    "ops": [{"type": "conv", "inputs": ["x", "w", "b", "r"], "outputs": ["y"], "attrs": {"pad": 1, "residual": true}}],
    "outputs": ["y"]})");
  CHECK_NOTHROW(test::graph_of(w));
  json bad = w;
  bad["ops"][0]["attrs"].erase("residual");
  CHECK_THROWS_WITH(test::graph_of(bad), Contains("set attribute \"residual\""));
  bad = w;
  bad["ops"][0]["attrs"]["residual"] = "sideways";
  CHECK_THROWS_WITH(test::graph_of(bad), Contains("attrs.residual") && Contains("sideways"));
  bad = w;
  bad["ops"][0]["inputs"] = {"x", "w", "b", "q"};
  CHECK_THROWS_WITH(test::graph_of(bad), Contains("residual [1, 3, 4, 5] must have the output's shape"));
  bad = w;
  bad["ops"][0]["inputs"] = {"x", "w"};
  CHECK_THROWS_WITH(test::graph_of(bad), Contains("needs the residual as the last input"));
}

TEST_CASE("a skip that is the conv's own input does not fold, and an op reading one tensor in two layouts is refused",
          "[graph][fusion]") {
  // conv(x) + x: x is the conv's X (1-D) and would be its residual (Y's [5, 81] rows, padded to even): one buffer
  // cannot be both, so the add stays apart.
  const json w = json::parse(R"({
    "tensors": {"x": {"shape": [1, 5, 9, 9], "init": {"uniform": [-1, 1], "seed": 1}},
                "w": {"shape": [5, 5, 1, 1], "init": {"uniform": [-1, 1], "seed": 2}}},
    "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["c"]},
            {"type": "add", "inputs": ["c", "x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  const Graph g = test::graph_of(w);
  CHECK(fuse(g, test::small_arch(), StagingPolicy::kMethod).folds.empty());
  // Given explicitly, the same conv is refused when it is planned, naming the tensor and both inputs.
  json given = w;
  given["ops"] = json::parse(R"([{"type": "conv", "inputs": ["x", "w", "x"], "outputs": ["y"],
                                  "attrs": {"residual": true}}])");
  const Graph explicit_residual = test::graph_of(given);
  CHECK_THROWS_WITH(
      plan_execution(explicit_residual, StagingPolicy::kMethod),
      Catch::Matchers::Contains("reads tensor 'x' as inputs 0 and 2") && Catch::Matchers::Contains("pass a copy"));
}
