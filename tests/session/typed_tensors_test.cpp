// Typed tensors end to end: int32 and bool graph inputs, gather by runtime indices (an embedding lookup), masks from
// comparisons, where and cast, their outputs as .npy of their own dtype, the out-of-range index fault, and binding
// errors that name the op and the element types.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/fault.hpp"
#include "support/temp_dir.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

TensorValues words(std::vector<std::size_t> shape, const std::vector<std::int32_t>& values, DType type) {
  return TensorValues{std::move(shape), SharedHalves(words_to_units(values)), type};
}

TensorValues halves(std::vector<std::size_t> shape, const std::vector<float>& values) {
  return TensorValues{std::move(shape), SharedHalves(floats_to_units(values, DType::kF16)), DType::kF16};
}

std::vector<float> values_of(const TensorValues& t) {
  return elements_as_floats(t.values.span(), t.dtype);
}

/// An embedding table [10, 6] looked up by ids [2, 5], and a masked selection on the ids.
json embedding_workload() {
  return json::parse(R"({
    "name": "typed",
    "tensors": {
      "ids": {"shape": [2, 5], "dtype": "int64", "init": {"uniform": [0, 10], "seed": 1}},
      "table": {"shape": [10, 6], "init": {"normal": [0, 1], "seed": 2}},
      "zero": {"shape": [1], "dtype": "int32", "init": {"value": 0}},
      "x": {"shape": [2, 5], "init": {"normal": [0, 1], "seed": 3}},
      "fill": {"shape": [1], "init": {"value": -2.5}}
    },
    "ops": [
      {"type": "gather", "inputs": ["table", "ids"], "outputs": ["emb"], "attrs": {"axis": 0}},
      {"type": "equal", "inputs": ["ids", "zero"], "outputs": ["pad"]},
      {"type": "not", "inputs": ["pad"], "outputs": ["keep"]},
      {"type": "cast", "inputs": ["keep"], "outputs": ["keep_f"], "attrs": {"to": "f16"}},
      {"type": "where", "inputs": ["pad", "fill", "x"], "outputs": ["masked"]},
      {"type": "greater", "inputs": ["x", "fill"], "outputs": ["above"]},
      {"type": "cast", "inputs": ["x"], "outputs": ["x_int"], "attrs": {"to": "int32"}},
      {"type": "transpose", "inputs": ["ids"], "outputs": ["ids_t"], "attrs": {"perm": [1, 0]}},
      {"type": "gather", "inputs": ["ids_t", "zero"], "outputs": ["first_col"], "attrs": {"axis": 1}}
    ],
    "outputs": ["emb", "pad", "keep_f", "masked", "above", "x_int", "first_col"]
  })");
}

}  // namespace

TEST_CASE("typed tensors: gather by runtime ids, masks, where and cast compute what numpy would", "[typed]") {
  for (const bool split : {false, true}) {
    INFO("split " << split);
    RunConfig config;
    config.arch = "sw26010";
    config.split.enabled = split;
    Session session(config);
    const Model model = session.load(embedding_workload());
    const std::vector<std::int32_t> ids = {3, 0, 9, -1, 5, 0, 0, 7, 2, -10};  // negative ids count from the end
    std::vector<float> table(60), x(10);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i) * 0.25F - 7.0F;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.75F - 3.2F;
    RunRequest request;
    request.inputs.emplace("ids", words({2, 5}, ids, DType::kI32));
    request.inputs.emplace("table", halves({10, 6}, table));
    request.inputs.emplace("x", halves({2, 5}, x));
    const RunResult r = session.run(model, request);

    const TensorValues& emb = r.outputs.at("emb");
    CHECK(emb.dtype == DType::kF16);
    CHECK(emb.shape == std::vector<std::size_t>{2, 5, 6});
    const std::vector<float> e = values_of(emb);
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const std::size_t row = static_cast<std::size_t>(ids[j] < 0 ? ids[j] + 10 : ids[j]);
      for (std::size_t k = 0; k < 6; ++k) CHECK(e[j * 6 + k] == static_cast<float>(f16(table[row * 6 + k])));
    }
    const TensorValues& pad = r.outputs.at("pad");
    CHECK(pad.dtype == DType::kBool);
    const std::vector<float> p = values_of(pad), keep = values_of(r.outputs.at("keep_f"));
    const std::vector<float> masked = values_of(r.outputs.at("masked")), above = values_of(r.outputs.at("above"));
    const TensorValues& x_int = r.outputs.at("x_int");
    CHECK(x_int.dtype == DType::kI32);
    const std::vector<float> xi = values_of(x_int);
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const float xj = static_cast<float>(f16(x[j]));
      CHECK(p[j] == (ids[j] == 0 ? 1.0F : 0.0F));
      CHECK(keep[j] == (ids[j] == 0 ? 0.0F : 1.0F));
      CHECK(masked[j] == (ids[j] == 0 ? -2.5F : xj));
      CHECK(above[j] == (xj > -2.5F ? 1.0F : 0.0F));
      CHECK(xi[j] == std::trunc(xj));
    }
    // Transposed ids [5, 2], column 0: the first row of ids.
    const TensorValues& first = r.outputs.at("first_col");
    CHECK(first.dtype == DType::kI32);
    CHECK(first.shape == std::vector<std::size_t>{5, 1});
    CHECK(values_of(first) == std::vector<float>{3, 0, 9, -1, 5});
  }
}

TEST_CASE("typed outputs are written as .npy of their own dtype", "[typed]") {
  test::TempDir dir("typed");
  Session session;
  const Model model = session.load(embedding_workload());
  RunRequest request;
  request.outputs = RunOutputs{dir / "out", {}};
  const RunResult r = session.run(model, request);
  const NpyArray pad = read_npy(dir / "out" / "pad.npy");
  CHECK(pad.dtype == "b1");
  CHECK(pad.shape == std::vector<std::size_t>{2, 5});
  CHECK(std::vector<float>(pad.integers.begin(), pad.integers.end()) == values_of(r.outputs.at("pad")));
  const NpyArray xi = read_npy(dir / "out" / "x_int.npy");
  CHECK(xi.dtype == "i4");
  CHECK(std::vector<float>(xi.integers.begin(), xi.integers.end()) == values_of(r.outputs.at("x_int")));
  CHECK(read_npy(dir / "out" / "emb.npy").dtype == "f2");
}

TEST_CASE("an id outside the table is the fault index-out-of-range naming the core and the index", "[typed]") {
  Session session;
  const Model model = session.load(embedding_workload());
  RunRequest request;
  request.inputs.emplace("ids", words({2, 5}, {1, 2, 3, 4, 5, 6, 7, 10, 8, 9}, DType::kI32));
  try {
    session.run(model, request);
    FAIL("the run did not trap");
  } catch (const Fault& f) {
    CHECK(f.kind() == FaultKind::kIndexOutOfRange);
    CHECK(f.kernel().find("gather") != std::string::npos);
    CHECK(f.core() >= 0);
    CHECK_THAT(f.detail(), Catch::Contains("index 10 (position 7 of the indices)") && Catch::Contains("[-10, 10)"));
  }
}

TEST_CASE("element types are checked when ops bind, naming the op and the types", "[typed]") {
  Session session;
  const auto load_with = [&](json op, json tensors) {
    json w = {
        {"name", "bad"}, {"tensors", std::move(tensors)}, {"ops", json::array({std::move(op)})}, {"outputs", {"y"}}};
    return session.load(w);
  };
  const json ids = {{"shape", {4}}, {"dtype", "int32"}, {"init", {{"value", 1}}}};
  const json x = {{"shape", {4}}, {"init", {{"value", 1}}}};
  CHECK_THROWS_WITH(
      load_with({{"type", "relu"}, {"inputs", {"ids"}}, {"outputs", {"y"}}, {"name", "act"}}, {{"ids", ids}}),
      Catch::Contains("'act' (relu)") && Catch::Contains("input 0 is int32") && Catch::Contains("f16"));
  CHECK_THROWS_WITH(load_with({{"type", "gather"}, {"inputs", {"x", "x"}}, {"outputs", {"y"}}}, {{"x", x}}),
                    Catch::Contains("indices (input 1) are f16, expected int32"));
  CHECK_THROWS_WITH(load_with({{"type", "where"}, {"inputs", {"x", "x", "x"}}, {"outputs", {"y"}}}, {{"x", x}}),
                    Catch::Contains("the condition") && Catch::Contains("is f16, expected bool"));
  CHECK_THROWS_WITH(
      load_with({{"type", "less"}, {"inputs", {"x", "ids"}}, {"outputs", {"y"}}}, {{"x", x}, {"ids", ids}}),
      Catch::Contains("compares f16 with int32"));
  CHECK_THROWS_WITH(load_with({{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}},
                              {{"x", {{"shape", {4}}, {"dtype", "int32"}, {"init", {{"normal", {0, 1}}}}}}}),
                    Catch::Contains("an int32 tensor takes a value, uniform or file"));
  // A given input value of another type is refused by name.
  const Model model = session.load(embedding_workload());
  RunRequest request;
  request.inputs.emplace("ids", halves({2, 5}, std::vector<float>(10, 1.0F)));
  CHECK_THROWS_WITH(session.run(model, request),
                    Catch::Contains("input 'ids': f16 values given") && Catch::Contains("is int32"));
}

TEST_CASE("typed inputs broadcast beyond a quarter of ldm are expanded in device memory first", "[typed]") {
  // On `tiny` (16 KiB of ldm) a broadcast input must be under 4 KiB to be resident: a [1, 2501] int32 row (10 KB)
  // compared with [2, 2501] and a [1, 2501] fp16 row (5 KB, an odd element count: staged with a zero after it)
  // selected by where are expanded to [2, 2501] first.
  RunConfig config;
  config.arch = "tiny";
  Session session(config);
  const Model model = session.load(json::parse(R"({
    "name": "wide_broadcast",
    "tensors": {
      "a": {"shape": [1, 2501], "dtype": "int32", "init": {"value": 0}},
      "b": {"shape": [2, 2501], "dtype": "int32", "init": {"value": 0}},
      "x": {"shape": [1, 2501], "init": {"value": 0}},
      "z": {"shape": [2, 2501], "init": {"value": 0}}
    },
    "ops": [
      {"type": "equal", "inputs": ["a", "b"], "outputs": ["same"]},
      {"type": "where", "inputs": ["same", "x", "z"], "outputs": ["w"]}
    ],
    "outputs": ["same", "w"]
  })"));
  std::vector<std::int32_t> a(2501), b(2 * 2501);
  std::vector<float> x(2501), z(2 * 2501);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::int32_t>(i % 7) - 3;
    x[i] = static_cast<float>(i % 11) * 0.5F;
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    b[i] = static_cast<std::int32_t>((i * 5) % 7) - 3;
    z[i] = -static_cast<float>(i % 13);
  }
  RunRequest request;
  request.inputs.emplace("a", words({1, 2501}, a, DType::kI32));
  request.inputs.emplace("b", words({2, 2501}, b, DType::kI32));
  request.inputs.emplace("x", halves({1, 2501}, x));
  request.inputs.emplace("z", halves({2, 2501}, z));
  const RunResult r = session.run(model, request);
  const std::vector<float> same = values_of(r.outputs.at("same")), w = values_of(r.outputs.at("w"));
  REQUIRE(same.size() == b.size());
  std::size_t equal = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const bool eq = a[i % 2501] == b[i];
    equal += eq ? 1 : 0;
    CHECK(same[i] == (eq ? 1.0F : 0.0F));
    CHECK(w[i] == static_cast<float>(f16(eq ? x[i % 2501] : z[i])));
  }
  CHECK(equal > 0);
  CHECK(equal < b.size());
}

TEST_CASE("a rank-6 int32 input broadcast on alternating axes is expanded too", "[typed]") {
  // [8, 1, 8, 1, 32, 1] against [1, 2, 1, 2, 1, 2] on `tiny`: 16 KB of int32, over a quarter of its ldm. No two axes
  // of the expansion merge, and copying int32 in 2-byte units adds a seventh axis.
  RunConfig config;
  config.arch = "tiny";
  Session session(config);
  const Model model = session.load(json::parse(R"({
    "name": "alternating_broadcast",
    "tensors": {
      "a": {"shape": [8, 1, 8, 1, 32, 1], "dtype": "int32", "init": {"value": 0}},
      "b": {"shape": [1, 2, 1, 2, 1, 2], "dtype": "int32", "init": {"value": 0}}
    },
    "ops": [{"type": "equal", "inputs": ["a", "b"], "outputs": ["same"]}],
    "outputs": ["same"]
  })"));
  std::vector<std::int32_t> a(8 * 8 * 32), b(8);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::int32_t>(i % 5) - 2;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::int32_t>(i % 3) - 1;
  RunRequest request;
  request.inputs.emplace("a", words({8, 1, 8, 1, 32, 1}, a, DType::kI32));
  request.inputs.emplace("b", words({1, 2, 1, 2, 1, 2}, b, DType::kI32));
  const std::vector<float> same = values_of(session.run(model, request).outputs.at("same"));
  REQUIRE(same.size() == 8 * 2 * 8 * 2 * 32 * 2);
  std::size_t equal = 0;
  for (std::size_t i = 0; i < same.size(); ++i) {
    // Output coordinates [i0, i1, i2, i3, i4, i5] of [8, 2, 8, 2, 32, 2].
    std::size_t rest = i;
    const std::size_t i5 = rest % 2, i4 = (rest /= 2) % 32, i3 = (rest /= 32) % 2, i2 = (rest /= 2) % 8,
                      i1 = (rest /= 8) % 2, i0 = rest / 2;
    const bool eq = a[(i0 * 8 + i2) * 32 + i4] == b[(i1 * 2 + i3) * 2 + i5];
    equal += eq ? 1 : 0;
    CHECK(same[i] == (eq ? 1.0F : 0.0F));
  }
  CHECK(equal > 0);
  CHECK(equal < same.size());
}

TEST_CASE("a typed op's fp16 output of an odd element count is written whole", "[typed]") {
  // cast int32 [3, 1001] -> f16: 3003 halves, the last core's last put would be 2 bytes; it takes the zero after it.
  for (const char* arch : {"tiny", "sw26010pro"}) {
    INFO(arch);
    RunConfig config;
    config.arch = arch;
    Session session(config);
    const Model model = session.load(json::parse(R"({
      "name": "cast_odd",
      "tensors": {"ids": {"shape": [3, 1001], "dtype": "int32", "init": {"value": 0}}},
      "ops": [{"type": "cast", "inputs": ["ids"], "outputs": ["f"], "attrs": {"to": "f16"}}],
      "outputs": ["f"]
    })"));
    std::vector<std::int32_t> ids(3003);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(i % 101) - 50;
    RunRequest request;
    request.inputs.emplace("ids", words({3, 1001}, ids, DType::kI32));
    const RunResult r = session.run(model, request);
    const std::vector<float> f = values_of(r.outputs.at("f"));
    REQUIRE(f.size() == ids.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) wrong += f[i] == static_cast<float>(ids[i]) ? 0u : 1u;
    CHECK(wrong == 0);
  }
}

TEST_CASE("typed ops give the same values when fp16 tensors are staged with padding inside", "[typed]") {
  // Naive staging pads each [.., 2499] row of x, z and the output w to 2500: the kernel reads and writes logical
  // elements in order, through 1-D copies of those tensors.
  const json workload = json::parse(R"({
    "name": "where_padded",
    "tensors": {
      "c": {"shape": [2, 3, 2499], "dtype": "bool", "init": {"uniform": [0, 1], "seed": 4}},
      "x": {"shape": [2, 1, 2499], "init": {"uniform": [-1, 1], "seed": 1}},
      "z": {"shape": [2, 3, 2499], "init": {"uniform": [-1, 1], "seed": 2}}
    },
    "ops": [{"type": "where", "inputs": ["c", "x", "z"], "outputs": ["w"]}],
    "outputs": ["w"]
  })");
  std::vector<float> outputs[2];
  for (const StagingPolicy staging : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    RunConfig config;
    config.arch = "sw26010pro";
    config.staging = staging;
    Session session(config);
    const RunResult r = session.run(session.load(workload), RunRequest{});
    outputs[staging == StagingPolicy::kNaive ? 1 : 0] = values_of(r.outputs.at("w"));
  }
  REQUIRE(outputs[0].size() == 2 * 3 * 2499);
  CHECK(outputs[0] == outputs[1]);
}
