// The library-level run API: loading by content, runs with the caller's inputs, run directories, traps, stops.
#include "ldmsim/session/session.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/sim/fault.hpp"
#include "support/onnx_wire.hpp"
#include "support/temp_dir.hpp"

using namespace ldmsim;
using ldmsim::test::TempDir;

namespace {

const char* kReluWorkload = R"({
  "name": "relu_pair",
  "tensors": {"x": {"shape": [2, 8], "init": {"normal": [0, 1], "seed": 3}}},
  "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["y"]},
          {"type": "sigmoid", "inputs": ["y"], "outputs": ["z"]}],
  "outputs": ["z"]
})";

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// An ONNX model y = Relu(x) for x of shape [1, 4, 6], written byte by byte.
std::string relu_onnx() {
  using test::Message;
  Message graph;
  graph.message(1, test::node("Relu", {"x"}, "y"));
  graph.bytes_field(2, "g");
  graph.message(11, test::value_info("x", {1, 4, 6}));
  graph.message(12, test::value_info("y", {1, 4, 6}));
  return test::model(graph).bytes;
}

TensorValues values_of(std::vector<std::size_t> shape, const std::vector<float>& floats) {
  std::vector<f16> halves;
  for (const float f : floats) halves.emplace_back(f);
  return TensorValues{std::move(shape), SharedHalves(std::move(halves))};
}

/// A user's operator whose kernel reads its input 2 bytes past a 4-byte boundary: a DMA the machine traps.
class MisalignedCopyOp final : public BoundOp {
 public:
  explicit MisalignedCopyOp(const Shape& x) : BoundOp({x}, {x}) {}
  PaddingSpec padding(std::size_t) const override { return {}; }
  void run(Machine& machine, std::span<const DeviceTensor> inputs, std::span<const DeviceTensor>,
           const std::string& label) const override {
    const DevicePtr<f16> from = inputs[0].ptr;
    machine
        .launch(LaunchSpec{{0}, label},
                [from](Core& core) {
                  auto buf = core.ldm().alloc<f16>(4);
                  core.get(buf.first(2), DevicePtr<const f16>(from + 1)).wait();
                })
        .join();
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> inputs) const override {
    return {inputs.begin(), inputs.end()};
  }
  OpCost cost() const override { return {}; }
};

class MisalignedCopyKind final : public OperatorKind {
 public:
  std::string_view name() const override { return "misaligned_copy"; }
  std::unique_ptr<BoundOp> bind(const JsonField&, std::span<const Shape> inputs) const override {
    return std::make_unique<MisalignedCopyOp>(inputs[0]);
  }
};

std::shared_ptr<const OperatorRegistry> registry_with_misaligned_copy() {
  auto registry = std::make_shared<OperatorRegistry>(OperatorRegistry::builtin());
  registry->add(std::make_unique<MisalignedCopyKind>());
  return registry;
}

/// A user's operator that copies its input but changes a put's ldm source before waiting for it: the result is
/// right (data moves at issue), and checking mode reports put-source.
class EarlySourceCopyOp final : public BoundOp {
 public:
  explicit EarlySourceCopyOp(const Shape& x) : BoundOp({x}, {x}) {}
  PaddingSpec padding(std::size_t) const override { return {}; }
  void run(Machine& machine, std::span<const DeviceTensor> inputs, std::span<const DeviceTensor> outputs,
           const std::string& label) const override {
    const DevicePtr<const f16> from(inputs[0].ptr);
    const DevicePtr<f16> to = outputs[0].ptr;
    const std::size_t n = inputs[0].layout().total;
    machine
        .launch(LaunchSpec{{0}, label},
                [from, to, n](Core& core) {
                  if (core.id() != 0) return;
                  auto buf = core.ldm().alloc<f16>(n);
                  core.get(buf, from).wait();
                  DmaHandle put = core.put(to, buf);
                  buf[0] = f16(-static_cast<float>(buf[0]) - 1.0f);  // the bug: the source changes in flight
                  put.wait();
                })
        .join();
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> inputs) const override {
    return {inputs.begin(), inputs.end()};
  }
  OpCost cost() const override { return {}; }
};

class EarlySourceCopyKind final : public OperatorKind {
 public:
  std::string_view name() const override { return "early_source_copy"; }
  std::unique_ptr<BoundOp> bind(const JsonField&, std::span<const Shape> inputs) const override {
    return std::make_unique<EarlySourceCopyOp>(inputs[0]);
  }
};

}  // namespace

TEST_CASE("a Session reads a model by its content, whatever its file is called") {
  TempDir dir("session");
  Session session;
  const Model json = session.load(dir.write("workload.txt", kReluWorkload));
  CHECK(json.format() == "workload-json");
  CHECK(json.name() == "relu_pair");
  const Model onnx = session.load(dir.write("model.bin", relu_onnx()));
  CHECK(onnx.format() == "onnx");
  REQUIRE(onnx.inputs().size() == 1);
  CHECK(onnx.inputs()[0].shape == std::vector<std::size_t>{1, 4, 6});
  // Content no reader knows is refused with the formats listed; a known extension lets its reader say what is wrong.
  CHECK_THROWS_WITH(session.load(dir.write("notes.dat", "hello")),
                    Catch::Contains("unknown format") && Catch::Contains("ONNX model"));
  CHECK_THROWS_WITH(session.load(dir.write("empty.dat", "")), Catch::Contains("the file is empty"));
  CHECK_THROWS_AS(session.load(dir.write("broken.onnx", std::string("\xff\xff\xff", 3))), ConfigError);
  CHECK_THROWS_WITH(session.load(dir / "missing.json"), Catch::Contains("missing.json"));
}

TEST_CASE("a run with the caller's input values computes on them") {
  Session session;
  TempDir dir("session");
  const Model model = session.load(dir.write("m.onnx", relu_onnx()));
  std::vector<float> x(24);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 11.5f;
  RunRequest request;
  request.inputs.emplace("x", values_of({1, 4, 6}, x));
  const RunResult result = session.run(model, request);
  const TensorValues& y = result.outputs.at("y");
  CHECK(y.shape == std::vector<std::size_t>{1, 4, 6});
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(float(y.values.span()[i]) == std::max(0.0f, x[i]));
  CHECK(result.cycles() > 0);
  CHECK(result.layers().size() == 1);
  REQUIRE(result.ops.size() == 1);  // typed records, of which stats is the JSON
  CHECK(result.ops[0].type == "relu");
  CHECK(result.ops[0].cycles == result.layers()[0].at("cycles").get<Cycle>());
  CHECK(result.summary.cycles == result.stats.at("cycles").get<Cycle>());
  CHECK(result.stats.at("fault").is_null());

  // Other values, the same model: the outputs follow the inputs.
  for (float& v : x) v = -v;
  request.inputs.at("x") = values_of({1, 4, 6}, x);
  const RunResult again = session.run(model, request);
  for (std::size_t i = 0; i < x.size(); ++i)
    CHECK(float(again.outputs.at("y").values.span()[i]) == std::max(0.0f, x[i]));
}

TEST_CASE("bad input values are refused by name before anything runs") {
  Session session;
  const Model model = session.load(nlohmann::json::parse(kReluWorkload));
  RunRequest unknown;
  unknown.inputs.emplace("q", values_of({2, 8}, std::vector<float>(16, 1.0f)));
  CHECK_THROWS_WITH(session.run(model, unknown), Catch::Contains("'q'") && Catch::Contains("its inputs: x"));
  RunRequest wrong_shape;
  wrong_shape.inputs.emplace("x", values_of({4, 4}, std::vector<float>(16, 1.0f)));
  CHECK_THROWS_WITH(session.run(model, wrong_shape), Catch::Contains("[4, 4]") && Catch::Contains("[2, 8]"));
  RunRequest output_as_input;
  output_as_input.inputs.emplace("z", values_of({2, 8}, std::vector<float>(16, 1.0f)));
  CHECK_THROWS_WITH(session.run(model, output_as_input), Catch::Contains("no such input"));
}

TEST_CASE("a run directory holds the outputs, stats and trace, identical run after run") {
  TempDir dir("session");
  Session session;
  const Model model = session.load(dir.write("w.json", kReluWorkload));
  RunRequest request;
  request.outputs = RunOutputs{dir / "a", {}};
  const RunResult a = session.run(model, request);
  request.outputs = RunOutputs{dir / "b", {}};
  (void)session.run(model, request);
  for (const char* file : {"stats.json", "z.npy", "trace.ldmtrace"}) {
    INFO(file);
    REQUIRE(std::filesystem::exists(dir / "a" / file));
    CHECK(file_text(dir / "a" / file) == file_text(dir / "b" / file));
  }
  CHECK_FALSE(std::filesystem::exists(dir / "a" / "RUN_INCOMPLETE"));
  CHECK(nlohmann::json::parse(file_text(dir / "a" / "stats.json")) == a.stats);
  const NpyArray z = read_npy(dir / "a" / "z.npy");
  CHECK(z.shape == std::vector<std::size_t>{2, 8});
  CHECK(z.halves.to_vector() == a.outputs.at("z").values.to_vector());
}

TEST_CASE("a session's next run reuses its machine, reset, with the same results", "[session][warm]") {
  TempDir dir("session");
  Session session(RunConfig{.machine = MachineOptions{.trace = true}});
  const Model model = session.load(dir.write("w.json", kReluWorkload));
  RunRequest request;
  request.outputs = RunOutputs{dir / "a", {}};
  RunResult a = session.run(model, request);
  const Machine* first = a.machine.get();
  REQUIRE(first != nullptr);
  a = RunResult{};  // nothing holds the machine (and its trace) any more: the next run resets and reuses it
  request.outputs = RunOutputs{dir / "b", {}};
  const RunResult b = session.run(model, request);
  CHECK(b.machine.get() == first);
  request.outputs = RunOutputs{dir / "c", {}};
  const RunResult c = session.run(model, request);  // b holds it, its trace must stay: a new machine
  CHECK(c.machine.get() != first);
  for (const char* run : {"b", "c"}) {
    for (const char* file : {"stats.json", "z.npy", "trace.ldmtrace"}) {
      INFO(run << "/" << file);
      CHECK(file_text(dir / "a" / file) == file_text(dir / run / file));
    }
  }
}

TEST_CASE("without a trace a run's result holds no machine, and reused machines give the same results",
          "[session][warm]") {
  TempDir dir("session");
  Session session(RunConfig{.machine = MachineOptions{.trace = false}});
  const Model model = session.load(dir.write("w.json", kReluWorkload));
  std::vector<RunResult> results;
  for (int i = 0; i < 3; ++i) results.push_back(session.run(model));
  for (const RunResult& r : results) {
    CHECK(r.machine == nullptr);
    CHECK(r.stats == results[0].stats);
    CHECK(r.outputs.at("z").values.to_vector() == results[0].outputs.at("z").values.to_vector());
  }
}

TEST_CASE("a trapped run writes its record up to the fault and rethrows it") {
  TempDir dir("session");
  Session session(RunConfig{}, registry_with_misaligned_copy());  // a user's operator, through the session
  const Model model = session.load(nlohmann::json::parse(R"({
    "name": "trap",
    "tensors": {"x": {"shape": [16], "init": {"value": 1}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["r"]},
            {"type": "misaligned_copy", "inputs": ["r"], "outputs": ["y"]}],
    "outputs": ["y"]})"));
  RunRequest request;
  request.outputs = RunOutputs{dir / "out", {}};
  std::filesystem::create_directories(dir / "out");
  dir.write("out/y.npy", "an earlier run's output");
  try {
    (void)session.run(model, request);
    FAIL("the run should trap");
  } catch (const Fault& fault) {
    CHECK(fault.kind() == FaultKind::kDmaMisaligned);
    CHECK(fault.kernel() == "misaligned_copy#1");
  }
  const nlohmann::json stats = nlohmann::json::parse(file_text(dir / "out" / "stats.json"));
  CHECK(stats.at("fault").at("kind") == "dma-misaligned");
  CHECK(stats.at("workload") == "trap");
  CHECK(std::filesystem::exists(dir / "out" / "trace.ldmtrace"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "y.npy"));  // no stale output looks like this run's
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "RUN_INCOMPLETE"));
}

TEST_CASE(
    "a stopped run raises RunInterrupted or what the stop request threw and leaves no files in a directory it "
    "created") {
  TempDir dir("session");
  Session session;
  const Model model = session.load(dir.write("w.json", kReluWorkload));
  RunRequest request;
  request.outputs = RunOutputs{dir / "out", {}};
  int polls = 0;
  request.should_stop = [&polls] { return ++polls == 1; };
  CHECK_THROWS_AS(session.run(model, request), RunInterrupted);
  CHECK(polls == 1);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));

  // Asked on the caller's thread while the run goes on on the machine's launch thread: a request that says stop at
  // its second ask (a poll during the run; the progress callback waits for it) stops the run.
  std::atomic<int> asked{0};
  const auto begun = std::chrono::steady_clock::now();
  const std::thread::id caller = std::this_thread::get_id();
  bool on_caller = true;
  request.should_stop = [&] {
    ++asked;
    on_caller = on_caller && std::this_thread::get_id() == caller;
    return asked > 1;
  };
  request.progress = [&](const OpNode&, const nlohmann::json&) {
    while (asked < 2 && std::chrono::steady_clock::now() - begun < std::chrono::seconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  CHECK_THROWS_AS(session.run(model, request), RunInterrupted);
  CHECK(asked == 2);
  CHECK(on_caller);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
  request.progress = nullptr;
  request.should_stop = []() -> bool { throw std::invalid_argument("no stop flag"); };
  CHECK_THROWS_WITH(session.run(model, request), "no stop flag");
  request.should_stop = nullptr;
  CHECK(session.run(model, request).outputs.count("z") == 1);  // the session goes on
}

TEST_CASE("models run together write one directory per model and the machine's summary") {
  TempDir dir("session");
  Session session;
  const auto file = dir.write("w.json", kReluWorkload);
  const Model a = session.load(file, {}, 2);
  const Model b = session.load(file, {}, 2);
  const TogetherResult together =
      session.run_together({&a, &b}, ContextSchedule::kPipelined, RunOutputs{dir / "out", {}});
  REQUIRE(together.names == std::vector<std::string>{"w", "w-2"});
  CHECK_FALSE(together.errors[0]);
  CHECK_FALSE(together.errors[1]);
  CHECK(together.results[0].outputs.at("z").values.to_vector() ==
        together.results[1].outputs.at("z").values.to_vector());
  CHECK(std::filesystem::exists(dir / "out" / "w" / "z.npy"));
  CHECK(std::filesystem::exists(dir / "out" / "w-2" / "stats.json"));
  CHECK(std::filesystem::exists(dir / "out" / "schedule.svg"));
  CHECK(together.summary.at("models").size() == 2);
  CHECK(together.stats.makespan > 0);
  // The picture's time axis is labelled at round cycle counts (1, 2 or 5 times a power of ten apart).
  std::ifstream picture(dir / "out" / "schedule.svg");
  const std::string svg{std::istreambuf_iterator<char>(picture), std::istreambuf_iterator<char>()};
  const std::regex tick(R"(text-anchor="middle">(\d+)</text>)");
  std::vector<std::uint64_t> ticks;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it) {
    ticks.push_back(std::stoull((*it)[1].str()));
  }
  REQUIRE(ticks.size() >= 2);
  CHECK(ticks[0] == 0);
  const std::uint64_t step = ticks[1];
  std::uint64_t power = 1;
  while (power * 10 <= step) power *= 10;
  CHECK((step == power || step == 2 * power || step == 5 * power));
  for (std::size_t i = 0; i < ticks.size(); ++i) CHECK(ticks[i] == i * step);
  CHECK(ticks.back() <= together.stats.makespan);
}

TEST_CASE("a model fused for fewer contexts than run together is refused before anything runs") {
  TempDir dir("session");
  Session session;
  const auto file = dir.write("w.json", kReluWorkload);
  const Model whole = session.load(file);  // fused for the whole local store
  const Model shared = session.load(file, {}, 2);
  CHECK(whole.contexts() == 1);
  CHECK(shared.contexts() == 2);
  CHECK_THROWS_WITH(session.run_together({&whole, &shared}, ContextSchedule::kSequential, RunOutputs{dir / "out", {}}),
                    Catch::Contains("contexts=2"));
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
  CHECK_THROWS_WITH(session.load(file, {}, 0), Catch::Contains("contexts must be at least 1"));
  const Model three = session.load(file, {}, 3);  // a smaller share than needed fits
  CHECK_FALSE(session.run_together({&shared, &three}, ContextSchedule::kSequential).errors[1]);
  RunConfig config;
  config.fusion = false;
  Session unfused(config);
  const Model plain = unfused.load(file);  // nothing fitted to a share: runs with any number of models
  const Model other = unfused.load(file);
  CHECK_FALSE(unfused.run_together({&plain, &other}, ContextSchedule::kSequential).errors[0]);
}

TEST_CASE("models run together under checking mode report per model, sequential and pipelined") {
  const ContextSchedule schedule = GENERATE(ContextSchedule::kSequential, ContextSchedule::kPipelined);
  TempDir dir("session");
  auto registry = std::make_shared<OperatorRegistry>(OperatorRegistry::builtin());
  registry->add(std::make_unique<EarlySourceCopyKind>());
  RunConfig config;
  config.check = parse_check_set("all", "test");
  Session session(config, registry);
  const Model buggy = session.load(nlohmann::json::parse(R"({
    "name": "buggy",
    "tensors": {"x": {"shape": [16], "init": {"value": 1}}},
    "ops": [{"type": "early_source_copy", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})"),
                                   {}, 2);
  const Model clean = session.load(dir.write("w.json", kReluWorkload), {}, 2);
  const TogetherResult together = session.run_together({&buggy, &clean}, schedule, RunOutputs{dir / "out", {}});
  REQUIRE_FALSE(together.errors[0]);
  REQUIRE_FALSE(together.errors[1]);
  const nlohmann::json& reports = together.results[0].stats.at("check");
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].at("kind") == "put-source");
  CHECK(reports[0].at("kernel") == "buggy:early_source_copy#0");  // the context names its launches
  CHECK(reports[0].at("count") == 1);
  CHECK(together.results[1].stats.at("check").empty());
  // The machine's summary and each model's stats.json carry the same reports.
  CHECK(together.summary.at("models")[0].at("check") == reports);
  CHECK(together.summary.at("models")[1].at("check").empty());
  const nlohmann::json written = nlohmann::json::parse(file_text(dir / "out" / "buggy" / "stats.json"));
  CHECK(written.at("check") == reports);
  CHECK(together.results[0].outputs.at("y").values.to_vector() == std::vector<f16>(16, f16(1.0f)));
}

TEST_CASE("models run together without checking mode have no check entry") {
  TempDir dir("session");
  Session session;
  const auto file = dir.write("w.json", kReluWorkload);
  const Model a = session.load(file, {}, 2);
  const Model b = session.load(file, {}, 2);
  const TogetherResult together = session.run_together({&a, &b}, ContextSchedule::kSequential);
  CHECK_FALSE(together.results[0].stats.contains("check"));
  CHECK_FALSE(together.summary.at("models")[0].contains("check"));
}

TEST_CASE("a session orders an attention's fused projection by head only for the cost-aware placement") {
  // Self-attention on 16 tokens, 2 heads of 8: x [16, 1, 16] times a constant in-projection [16, 48], q, k and v
  // sliced and split into heads. Only `--split auto` can cut an attention by heads, so only it reorders.
  const auto w = nlohmann::json::parse(R"({
    "tensors": {"x": {"shape": [16, 1, 16], "init": {"uniform": [-1, 1], "seed": 1}},
                "w": {"shape": [16, 48], "init": {"uniform": [-0.2, 0.2], "seed": 2}, "constant": true},
                "s": {"shape": [], "init": {"value": 0.35}}},
    "ops": [{"type": "matmul", "inputs": ["x", "w"], "outputs": ["p"]},
            {"type": "slice", "inputs": ["p"], "outputs": ["q0"], "attrs": {"starts": [0], "ends": [16], "axes": [2]}},
            {"type": "reshape", "inputs": ["q0"], "outputs": ["q1"], "attrs": {"shape": [16, 2, 8]}},
            {"type": "transpose", "inputs": ["q1"], "outputs": ["q"], "attrs": {"perm": [1, 0, 2]}},
            {"type": "slice", "inputs": ["p"], "outputs": ["k0"], "attrs": {"starts": [16], "ends": [32], "axes": [2]}},
            {"type": "reshape", "inputs": ["k0"], "outputs": ["k1"], "attrs": {"shape": [16, 2, 8]}},
            {"type": "transpose", "inputs": ["k1"], "outputs": ["kt"], "attrs": {"perm": [1, 2, 0]}},
            {"type": "slice", "inputs": ["p"], "outputs": ["v0"], "attrs": {"starts": [32], "ends": [48], "axes": [2]}},
            {"type": "reshape", "inputs": ["v0"], "outputs": ["v1"], "attrs": {"shape": [16, 2, 8]}},
            {"type": "transpose", "inputs": ["v1"], "outputs": ["v"], "attrs": {"perm": [1, 0, 2]}},
            {"type": "matmul", "inputs": ["q", "kt"], "outputs": ["scores"]},
            {"type": "mul", "inputs": ["scores", "s"], "outputs": ["scaled"]},
            {"type": "softmax", "inputs": ["scaled"], "outputs": ["probs"], "attrs": {"axis": -1}},
            {"type": "matmul", "inputs": ["probs", "v"], "outputs": ["y"]},
            {"type": "transpose", "inputs": ["y"], "outputs": ["merged"], "attrs": {"perm": [1, 0, 2]}}],
    "outputs": ["merged"]})");
  std::map<std::string, std::vector<f16>> outputs;
  for (const bool cost_aware : {false, true}) {
    RunConfig config;
    config.arch = "sw26010pro";
    config.split.enabled = cost_aware;
    config.split.cost_aware = cost_aware;
    Session session(config);
    const Model model = session.load(w);
    REQUIRE(model.fusion() != nullptr);
    CHECK(model.fusion()->head_major.size() == (cost_aware ? 1U : 0U));
    outputs[cost_aware ? "auto" : "off"] = session.run(model, RunRequest{}).outputs.at("merged").values.to_vector();
  }
  CHECK(outputs["auto"] == outputs["off"]);  // the same values either way
}
