// Tensor tags: categories from roles and degrees (input, hidden, output and constant neurons; constant and input
// weights; auxiliary), dtypes and constant values from the workload, and the resident layout's padding and size
// from the plan; a value fusion keeps inside one kernel is stored in ldm only.
#include "ldmsim/graph/tags.hpp"

#include <catch2/catch.hpp>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/fusion.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

json tagged_workload() {
  return json::parse(R"({
    "name": "tags",
    "tensors": {"x": {"shape": [3, 5], "init": {"uniform": [-1, 1], "seed": 1}},
                "w": {"shape": [7, 5], "init": {"uniform": [-1, 1], "seed": 2}},
                "b": {"shape": [7], "init": {"value": 0.5}},
                "k": {"shape": [7], "init": {"value": 0.25}, "constant": true},
                "given_w": {"shape": [4, 7], "init": {"uniform": [-1, 1], "seed": 3}, "constant": false},
                "seq": {"shape": [2, 1, 3], "init": {"uniform": [-1, 1], "seed": 4}, "dtype": "f32"},
                "lw": {"shape": [1, 8, 3], "init": {"uniform": [-1, 1], "seed": 5}},
                "lr": {"shape": [1, 8, 2], "init": {"uniform": [-1, 1], "seed": 6}},
                "lb": {"shape": [1, 16], "init": {"value": 0}},
                "h0": {"shape": [1, 1, 2], "init": {"value": 0.1}},
                "unused": {"shape": [2], "init": {"value": 1}},
                "passed": {"shape": [3], "init": {"value": 2}},
                "c0": {"shape": [1, 1, 2], "init": {"value": 0.5}, "constant": true},
                "odd": {"shape": [3, 5, 7, 9], "init": {"value": 1}}},
    "ops": [{"type": "fc", "inputs": ["x", "w", "b"], "outputs": ["h"]},
            {"type": "add", "inputs": ["h", "k"], "outputs": ["h2"]},
            {"type": "relu", "inputs": ["h2"], "outputs": ["h3"]},
            {"type": "fc", "inputs": ["h3", "given_w"], "outputs": ["y"]},
            {"type": "lstm", "inputs": ["seq", "lw", "lr", "lb", "h0", "c0"], "outputs": ["ly", "lh", "lc"]},
            {"type": "transpose", "inputs": ["odd"], "outputs": ["odd_t"], "attrs": {"perm": [0, 1, 3, 2]}}],
    "outputs": ["y", "ly", "passed"]})");
}

const TensorTags& by_name(const std::vector<TensorTags>& tags, const std::string& name) {
  for (const TensorTags& t : tags) {
    if (t.name == name) return t;
  }
  FAIL("no tensor " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("tensor categories follow roles, degrees and the constant flag", "[graph][tags]") {
  const Graph g = workload_from_json(tagged_workload(), "tags", ".", test::registry(), "tags");
  const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
  const auto tags = tensor_tags(g, g, plan);
  REQUIRE(tags.size() == g.tensors().size());
  const auto category = [&](const char* name) { return std::string(to_string(by_name(tags, name).fixed.category)); };
  CHECK(category("x") == "input neuron");
  CHECK(category("w") == "constant weight");  // read only as fc's weights, no flag: a constant
  CHECK(category("b") == "constant weight");
  CHECK(category("k") == "constant neuron");     // read as data, flagged constant
  CHECK(category("given_w") == "input weight");  // a parameter given when the model runs
  CHECK(category("h") == "hidden neuron");
  CHECK(category("y") == "output neuron");
  CHECK(category("seq") == "input neuron");
  CHECK(category("lw") == "constant weight");
  CHECK(category("h0") == "auxiliary");  // an initial state
  CHECK(category("unused") == "auxiliary");
  CHECK(category("lh") == "hidden neuron");     // produced, not an output, not read
  CHECK(category("passed") == "input neuron");  // an input that is also an output
  CHECK(category("c0") == "auxiliary");
  CHECK(by_name(tags, "c0").static_text() == "static:auxiliary,fp16,[1,1,2],values [0.5,0.5]");  // flagged constant
  // Never read: never staged.
  CHECK(by_name(tags, "unused").dynamic_text() == "dynamic:fp16,-,tiling none,padding none,size 0,split none,none,no");

  // Static text: dtype as declared, dims, constant values in full when few, else how they are made.
  CHECK(by_name(tags, "seq").static_text() == "static:input neuron,fp32,[2,1,3]");
  CHECK(by_name(tags, "b").static_text() == "static:constant weight,fp16,[7],values [0.5,0.5,0.5,0.5,0.5,0.5,0.5]");
  CHECK(by_name(tags, "w").static_text() == "static:constant weight,fp16,[7,5],values uniform [-1, 1] seed 2");

  // Dynamic text: fc's output [3, 7] has odd rows: one zero after each (the add-a-column plan), 3 x 8 x 2 bytes.
  CHECK(by_name(tags, "h").dynamic_text() == "dynamic:fp16,nc,tiling none,padding c=1,size 48,split none,mem0,no");
  const json j = by_name(tags, "h").to_json();
  CHECK(j["dynamic"]["padding"]["added_bytes"] == 6);
  CHECK(j["dynamic"]["store"] == "mem0");
  CHECK(j["static"]["category"] == "hidden neuron");
}

TEST_CASE("padding is told per dimension of the view, in steps of that dimension", "[graph][tags]") {
  const Graph g = workload_from_json(tagged_workload(), "tags", ".", test::registry(), "tags");
  // Naive staging makes every dimension of [3, 5, 7, 9] even: one more of each (4 x 6 x 8 x 10 elements).
  const ExecutionPlan naive = plan_execution(g, StagingPolicy::kNaive);
  const auto tags = tensor_tags(g, g, naive);
  CHECK(by_name(tags, "odd").dynamic_text() ==
        "dynamic:fp16,nchw,tiling none,padding w=1;h=1;c=1;n=1,size 3840,split none,mem0,no");
}

TEST_CASE("a value fused into one kernel is stored in ldm only", "[graph][tags]") {
  const Graph g = workload_from_json(tagged_workload(), "tags", ".", test::registry(), "tags");
  const Arch arch = Arch::preset("sw26010");
  const FusedGraph fused = fuse(g, arch, StagingPolicy::kMethod);
  const ExecutionPlan plan = plan_execution(fused.graph, StagingPolicy::kMethod);
  const auto tags = tensor_tags(g, fused.graph, plan);
  // add + relu fuse: h2 lives between them inside the kernel.
  REQUIRE_FALSE(fused.graph.find("h2").has_value());
  CHECK(by_name(tags, "h2").dynamic.store == "ldm");
  CHECK(by_name(tags, "h2").dynamic.bytes == 0);
  CHECK(by_name(tags, "h2").fixed.category == TensorCategory::kHiddenNeuron);  // still what it is
  CHECK(by_name(tags, "h3").dynamic.store == "mem0");
}
