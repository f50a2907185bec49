// The graph layer end to end: a 6-op chain whose ops want different padded layouts runs with every intermediate
// kept on the device (re-layouts are traced device kernels, the only host copies are the graph's inputs and
// output), frees dead intermediates (the peak footprint drops), and matches the chain of fp32 references.
#include <catch2/catch.hpp>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

json chain() {
  return json::parse(R"({
    "name": "chain6",
    "tensors": {"x": {"shape": [3, 5, 7, 9], "init": {"uniform": [-2, 2], "seed": 11}},
                "bias": {"shape": [9], "init": {"uniform": [-1, 1], "seed": 12}},
                "scale": {"shape": [], "init": {"value": 1.5}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["a"]},
            {"type": "softmax", "inputs": ["a"], "outputs": ["b"], "attrs": {"axis": 3}},
            {"type": "add", "inputs": ["b", "bias"], "outputs": ["c"]},
            {"type": "softmax", "inputs": ["c"], "outputs": ["d"], "attrs": {"axis": 2}},
            {"type": "mul", "inputs": ["d", "scale"], "outputs": ["e"]},
            {"type": "softmax", "inputs": ["e"], "outputs": ["y"], "attrs": {"axis": 1}}],
    "outputs": ["y"]})");
}

std::uint64_t padded_bytes(const PaddingPlan& p) {
  return static_cast<std::uint64_t>(p.layout.total) * 2;
}

/// The largest |device - reference| of output `name`, the references run op by op on the logical data and
/// rounded to fp16 between ops as the device does.
double worst_error_against_references(const Graph& g, const std::string& name, const std::vector<f16>& got) {
  std::map<std::size_t, HostTensor> host;
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    const TensorNode& n = g.tensor(t);
    if (!n.is_input()) continue;
    const std::vector<f16> h = initial_values(n).to_vector();
    HostTensor ht{n.shape, std::vector<float>(h.size())};
    halves_to_floats(h, ht.data);
    host[t] = std::move(ht);
  }
  for (const OpNode& op : g.ops()) {
    std::vector<HostTensor> in;
    for (std::size_t t : op.inputs) in.push_back(host.at(t));
    auto out = op.bound->reference(in);
    std::vector<f16> h(out[0].data.size());
    floats_to_halves(out[0].data, h);
    halves_to_floats(h, out[0].data);
    host[op.outputs[0]] = std::move(out[0]);
  }
  const HostTensor& want = host.at(*g.find(name));
  REQUIRE(got.size() == want.data.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(static_cast<float>(got[i])) - want.data[i]));
  }
  return worst;
}

}  // namespace

TEST_CASE("a 6-op chain keeps every intermediate on the device and frees the dead ones", "[graph]") {
  const Graph g = workload_from_json(chain(), "chain.json", ".", test::registry());
  const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
  std::size_t relayout_steps = 0;
  std::uint64_t host_bytes = 0;  // what staging may copy: the graph's inputs up, its output down
  for (const Step& s : plan.steps) {
    if (s.kind == Step::Kind::kRelayout) ++relayout_steps;
    if (s.kind == Step::Kind::kStage) host_bytes += padded_bytes(s.plan);
  }
  host_bytes += padded_bytes(plan.op_plans[5][1]);
  // softmax over axis 3, then 2, then 1: each change of axis needs another layout (2 re-layouts); the element-wise
  // ops between them take the layout they are given, and relu stages x in the first softmax's layout.
  REQUIRE(relayout_steps == 2);

  Machine m{test::small_arch()};
  const ExecutionResult r = execute(g, plan, m);
  // No tensor left the device between ops: the host moved exactly the inputs and the output.
  CHECK(r.stats["padding"]["bytes_staged"].get<std::uint64_t>() == host_bytes);
  REQUIRE(r.stats["relayouts"].size() == relayout_steps);
  for (const auto& rl : r.stats["relayouts"]) CHECK(rl["dma_bytes"].get<std::uint64_t>() > 0);
  // The trace shows each re-layout as a kernel launch of its own, between the ops.
  std::vector<std::string> launches;
  for (const Marker& mk : m.trace()[0]->markers()) {
    if (mk.kind == MarkerKind::kLaunchBegin) launches.push_back(mk.text);
  }
  CHECK(launches.size() == 6 + relayout_steps);
  CHECK(std::count_if(launches.begin(), launches.end(), [](const std::string& k) {
          return k.rfind("relayout:", 0) == 0;
        }) == static_cast<std::ptrdiff_t>(relayout_steps));
  // Intermediates die after their last reader.
  const auto& mem = r.stats["device_memory"];
  CHECK(mem["tensors_freed"].get<std::size_t>() >= 6);
  CHECK(mem["peak_tensor_bytes"].get<std::uint64_t>() == plan.peak_bytes);
  CHECK(mem["peak_tensor_bytes"].get<std::uint64_t>() < mem["tensor_bytes_without_freeing"].get<std::uint64_t>());

  // The same plan without its frees holds more at its peak.
  ExecutionPlan keep = plan;
  std::erase_if(keep.steps, [](const Step& s) { return s.kind == Step::Kind::kFree; });
  Machine m2{test::small_arch()};
  const ExecutionResult kept = execute(g, keep, m2);
  CHECK(kept.stats["device_memory"]["peak_tensor_bytes"].get<std::uint64_t>() >
        mem["peak_tensor_bytes"].get<std::uint64_t>() + padded_bytes(plan.op_plans[0][0]));
  CHECK(kept.outputs.at("y") == r.outputs.at("y"));

  // The outputs match the chain of fp32 references, op by op on the logical data.
  CHECK(worst_error_against_references(g, "y", r.outputs.at("y")) < 2e-3);
}

TEST_CASE("graph runs are deterministic across host threads and policies agree", "[graph]") {
  const Graph g = workload_from_json(chain(), "chain.json", ".", test::registry());
  std::vector<std::vector<f16>> outs;
  std::vector<std::uint64_t> cycles;
  for (unsigned threads : {1u, 2u}) {
    Machine m{test::small_arch(), MachineOptions{.threads = threads}};
    const ExecutionResult r = execute(g, m);
    outs.push_back(r.outputs.at("y"));
    cycles.push_back(r.stats["cycles"].get<std::uint64_t>());
  }
  CHECK(outs[0] == outs[1]);
  CHECK(cycles[0] == cycles[1]);
  Machine naive{test::small_arch()};
  CHECK(execute(g, naive, ExecuteOptions{.staging = StagingPolicy::kNaive}).outputs.at("y") == outs[0]);
}

TEST_CASE("the dump shows layouts, re-layouts and frees", "[graph]") {
  const Graph g = workload_from_json(chain(), "chain.json", ".", test::registry());
  const std::string text = describe(g, plan_execution(g, StagingPolicy::kMethod));
  CHECK_THAT(text, Catch::Contains("graph chain6: 9 tensors, 6 ops, staging method"));
  CHECK_THAT(text, Catch::Contains("%1 scale [], input"));
  CHECK_THAT(text, Catch::Contains("relayout %"));
  CHECK_THAT(text, Catch::Contains("free %"));
  CHECK_THAT(text, Catch::Contains("softmax#5"));
}

TEST_CASE("workloads take rank 0 to 6 tensors and broadcast operands", "[graph]") {
  const json w = json::parse(R"({
    "tensors": {"x": {"shape": [2, 1, 3, 1, 5, 4], "init": {"uniform": [-1, 1]}},
                "c": {"shape": [3, 1, 4], "init": {"uniform": [-1, 1], "seed": 2}},
                "s": {"shape": [], "init": {"value": 2}}},
    "ops": [{"type": "add", "inputs": ["x", "c"], "outputs": ["a"]},
            {"type": "mul", "inputs": ["a", "s"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  const Graph g = workload_from_json(w, "w.json", ".", test::registry());
  CHECK(g.tensor(*g.find("a")).shape == Shape{2, 1, 3, 3, 5, 4});
  Machine m{test::small_arch()};
  const ExecutionResult r = execute(g, m);
  CHECK(r.shapes.at("y") == Shape{2, 1, 3, 3, 5, 4});
  // y = 2 * (x + c) element by element, with c read through its broadcast strides.
  const std::vector<f16> x = initial_values(g.tensor(*g.find("x"))).to_vector();
  const std::vector<f16> c = initial_values(g.tensor(*g.find("c"))).to_vector();
  const Shape out{2, 1, 3, 3, 5, 4};
  const auto sx = broadcast_strides(Shape{2, 1, 3, 1, 5, 4}, out), sc = broadcast_strides(Shape{3, 1, 4}, out);
  for (std::uint64_t i = 0; i < out.elements(); ++i) {
    std::uint64_t rest = i, ix = 0, ic = 0;
    for (std::size_t d = out.rank(); d-- > 0;) {
      ix += (rest % out[d]) * sx[d];
      ic += (rest % out[d]) * sc[d];
      rest /= out[d];
    }
    const float sum = static_cast<float>(f16(static_cast<float>(x[ix]) + static_cast<float>(c[ic])));
    REQUIRE(static_cast<float>(r.outputs.at("y")[i]) == Approx(2 * sum).margin(2e-3));
  }
}

TEST_CASE("workload errors name the file and the JSON path", "[graph]") {
  auto error_of = [](const json& tree) -> std::string {
    try {
      workload_from_json(tree, "w.json", ".", test::registry());
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "accepted";
  };
  json t = chain();
  t["tensors"]["x"]["shape"] = "big";
  CHECK_THAT(error_of(t), Catch::Contains("w.json") && Catch::Contains("tensors.x.shape"));
  t = chain();
  t["tensors"]["x"]["init"]["seed"] = "eleven";
  CHECK_THAT(error_of(t), Catch::Contains("tensors.x.init.seed"));
  t = chain();
  t["ops"][1]["attrs"]["axis"] = "three";
  CHECK_THAT(error_of(t), Catch::Contains("op 1 (softmax)") && Catch::Contains("ops[1].attrs.axis"));
  t = chain();
  t["ops"][1]["inputz"] = {"a"};
  CHECK_THAT(error_of(t), Catch::Contains("ops[1]") && Catch::Contains("did you mean ops[1].inputs"));
  t = chain();
  t["tensors"]["bias"]["shape"] = {4};  // a [4] operand does not broadcast against [3, 5, 7, 9]
  CHECK_THAT(error_of(t), Catch::Contains("op 2 (add)") && Catch::Contains("do not broadcast"));
  t = chain();
  t["tensors"]["x"]["shape"] = {4294967296, 4294967296};
  CHECK_THAT(error_of(t), Catch::Contains("tensor 'x'") && Catch::Contains("2^48"));
  t = chain();
  t["tensors"]["x"]["shape"] = {1, 1, 1, 1, 1, 1, 1};
  CHECK_THAT(error_of(t), Catch::Contains("rank 7"));
}

TEST_CASE("a tensor larger than the machine's memory is refused before anything is allocated", "[graph]") {
  json w = json::parse(R"({
    "tensors": {"x": {"shape": [65536, 65536, 4], "init": {"value": 1}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  const Graph g = workload_from_json(w, "w.json", ".", test::registry());
  Machine m{test::small_arch()};
  CHECK_THROWS_WITH(execute(g, m), Catch::Contains("tensor 'x'") && Catch::Contains("main memory"));
}

TEST_CASE("default attributes fill what an op does not set, and only that", "[graph]") {
  WorkloadLoadOptions options;
  options.default_attrs["softmax"] = {{"axis", 3}};
  const Graph g = workload_from_json(chain(), "chain.json", ".", test::registry(), "chain", options);
  // ops 1, 3 and 5 set their axis; a softmax without one takes the default.
  json w = chain();
  w["ops"][5].erase("attrs");
  const Graph d = workload_from_json(w, "chain.json", ".", test::registry(), "chain", options);
  CHECK(d.ops()[5].bound->view(0) == Shape4::matrix_view(Shape{3, 5, 7, 9}, 3));
  CHECK(g.ops()[5].bound->view(0) == Shape4::matrix_view(Shape{3, 5, 7, 9}, 1));
}

TEST_CASE("element-wise ops adopt the layout their input is produced in: no re-layout inside a chain", "[graph]") {
  // Rows of 105 (odd) and 1001 of them: softmax wants rows in pairs plus a zero row, relu alone would want one
  // zero at the end. Between the softmaxes nothing may be re-laid out.
  const json w = json::parse(R"({
    "name": "adopt",
    "tensors": {"x": {"shape": [1001, 105], "init": {"uniform": [-2, 2], "seed": 3}}},
    "ops": [{"type": "softmax", "inputs": ["x"], "outputs": ["a"]},
            {"type": "relu", "inputs": ["a"], "outputs": ["b"]},
            {"type": "add", "inputs": ["b", "a"], "outputs": ["c"]},
            {"type": "softmax", "inputs": ["c"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  const Graph g = workload_from_json(w, "adopt.json", ".", test::registry());
  const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
  for (const Step& s : plan.steps) CHECK(s.kind != Step::Kind::kRelayout);
  CHECK(plan.op_plans[1][1].kind == plan.op_plans[0][1].kind);
  CHECK(plan.op_plans[1][1].layout.total == plan.op_plans[0][1].layout.total);
  CHECK(plan.op_plans[1][1].layout.total != plan_one_d(Shape4::view_of(Shape{1001, 105})).layout.total);
  // And the result is the chain of references, the same under every policy.
  std::vector<std::vector<f16>> outs;
  for (StagingPolicy policy : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    Machine m{test::small_arch()};
    const ExecutionResult r = execute(g, m, ExecuteOptions{.staging = policy});
    CHECK(r.stats["relayouts"].size() == 0);
    outs.push_back(r.outputs.at("y"));
  }
  CHECK(outs[0] == outs[1]);
  CHECK(worst_error_against_references(g, "y", outs[0]) < 2e-3);
}
