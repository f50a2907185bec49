// Arithmetic of int32 tensors end to end: add, sub, mul, div, mod, min, max, neg, abs and clip against 64-bit
// integer arithmetic wrapped to 32 bits, with numpy broadcasting, whole and split across groups; the fault
// divide-by-zero; and binding errors that name the op.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

TensorValues words(std::vector<std::size_t> shape, const std::vector<std::int32_t>& values) {
  return TensorValues{std::move(shape), SharedHalves(words_to_units(values)), DType::kI32};
}

std::int32_t wrap(std::int64_t v) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
}

/// a [3, 8] and b [8] (broadcast along the rows): every binary op once, the unary ones of a.
json arithmetic_workload() {
  return json::parse(R"({
    "name": "integer_arithmetic",
    "tensors": {
      "a": {"shape": [3, 8], "dtype": "int32", "init": {"value": 0}},
      "b": {"shape": [8], "dtype": "int32", "init": {"value": 1}}
    },
    "ops": [
      {"type": "add", "inputs": ["a", "b"], "outputs": ["sum"]},
      {"type": "sub", "inputs": ["a", "b"], "outputs": ["difference"]},
      {"type": "mul", "inputs": ["a", "b"], "outputs": ["product"]},
      {"type": "div", "inputs": ["a", "b"], "outputs": ["quotient"]},
      {"type": "mod", "inputs": ["a", "b"], "outputs": ["python_mod"]},
      {"type": "mod", "inputs": ["a", "b"], "outputs": ["c_mod"], "attrs": {"fmod": 1}},
      {"type": "min", "inputs": ["a", "b"], "outputs": ["smaller"]},
      {"type": "max", "inputs": ["a", "b"], "outputs": ["larger"]},
      {"type": "neg", "inputs": ["a"], "outputs": ["negated"]},
      {"type": "abs", "inputs": ["a"], "outputs": ["magnitude"]},
      {"type": "clip", "inputs": ["a"], "outputs": ["clipped"], "attrs": {"min": -100000, "max": 70000}},
      {"type": "clip", "inputs": ["a"], "outputs": ["clipped_high"], "attrs": {"min": 70000, "max": 80000}}
    ],
    "outputs": ["sum", "difference", "product", "quotient", "python_mod", "c_mod", "smaller", "larger", "negated",
                "magnitude", "clipped", "clipped_high"]
  })");
}

std::vector<std::int32_t> words_of(const TensorValues& t) {
  return units_to_words(t.values.span());
}

}  // namespace

TEST_CASE("int32 arithmetic computes what 64-bit integers wrapped to 32 bits give", "[typed]") {
  const std::vector<std::int32_t> a = {7,    -7, 7,      -7, kMax, kMin, kMin,  123456,  //
                                       0,    5,  -5,     99, -99,  kMax, 46341, -70001,  //
                                       1000, -1, 100000, 2,  3,    -4,   kMin,  65536};
  const std::vector<std::int32_t> b = {2, 2, -2, -2, 1, -1, kMax, 65536};
  const std::map<std::string, std::function<std::int64_t(std::int64_t, std::int64_t)>> binary{
      {"sum", [](std::int64_t x, std::int64_t y) { return x + y; }},
      {"difference", [](std::int64_t x, std::int64_t y) { return x - y; }},
      {"product", [](std::int64_t x, std::int64_t y) { return x * y; }},
      {"quotient", [](std::int64_t x, std::int64_t y) { return x / y; }},  // C++ truncates toward zero
      {"python_mod",
       [](std::int64_t x, std::int64_t y) {
         const std::int64_t r = x % y;
         return r != 0 && (r < 0) != (y < 0) ? r + y : r;
       }},
      {"c_mod", [](std::int64_t x, std::int64_t y) { return x % y; }},
      {"smaller", [](std::int64_t x, std::int64_t y) { return std::min(x, y); }},
      {"larger", [](std::int64_t x, std::int64_t y) { return std::max(x, y); }}};
  for (const bool split : {false, true}) {
    INFO("split " << split);
    RunConfig config;
    config.arch = "sw26010";
    config.split.enabled = split;
    Session session(config);
    const Model model = session.load(arithmetic_workload());
    RunRequest request;
    request.inputs.emplace("a", words({3, 8}, a));
    request.inputs.emplace("b", words({8}, b));
    const RunResult r = session.run(model, request);
    for (const auto& [name, f] : binary) {
      INFO(name);
      const TensorValues& y = r.outputs.at(name);
      CHECK(y.dtype == DType::kI32);
      CHECK(y.shape == std::vector<std::size_t>{3, 8});
      const std::vector<std::int32_t> got = words_of(y);
      for (std::size_t i = 0; i < a.size(); ++i) {
        INFO("element " << i << ": " << a[i] << " and " << b[i % 8]);
        CHECK(got[i] == wrap(f(a[i], b[i % 8])));
      }
    }
    const std::vector<std::int32_t> negated = words_of(r.outputs.at("negated"));
    const std::vector<std::int32_t> magnitude = words_of(r.outputs.at("magnitude"));
    const std::vector<std::int32_t> clipped = words_of(r.outputs.at("clipped"));
    const std::vector<std::int32_t> clipped_high = words_of(r.outputs.at("clipped_high"));
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO("element " << i << ": " << a[i]);
      CHECK(negated[i] == wrap(-static_cast<std::int64_t>(a[i])));
      CHECK(magnitude[i] == wrap(std::abs(static_cast<std::int64_t>(a[i]))));
      CHECK(clipped[i] == std::clamp<std::int32_t>(a[i], -100000, 70000));
      CHECK(clipped_high[i] == std::clamp<std::int32_t>(a[i], 70000, 80000));  // bounds beyond fp16's range
    }
  }
  // The wraps the cases above rely on, spelled out.
  CHECK(wrap(static_cast<std::int64_t>(kMin) / -1) == kMin);
  CHECK(wrap(-static_cast<std::int64_t>(kMin)) == kMin);
  CHECK(wrap(static_cast<std::int64_t>(46341) * 46341) == -2147479015);
}

TEST_CASE("an integer division by zero is the fault divide-by-zero naming the element", "[typed]") {
  Session session;
  const Model model = session.load(arithmetic_workload());
  const std::vector<std::int32_t> a(24, 9);
  RunRequest request;
  request.inputs.emplace("a", words({3, 8}, a));
  request.inputs.emplace("b", words({8}, {1, 2, 3, 4, 5, 0, 7, 8}));
  try {
    session.run(model, request);
    FAIL("the run did not trap");
  } catch (const Fault& f) {
    CHECK(f.kind() == FaultKind::kDivideByZero);
    CHECK(to_string(f.kind()) == "divide-by-zero");
    CHECK(f.core() >= 0);
    CHECK_THAT(f.detail(), Catch::Contains("div: 9 (element 5 of the output) divided by zero"));
    REQUIRE(f.field());
    CHECK(f.field()->name == "element");
    CHECK(f.field()->value == 5);
  }
}

TEST_CASE("mod of f16 tensors with fmod 1 keeps the dividend's sign and fmod 0 is refused", "[typed]") {
  Session session;
  const Model model = session.load(json::parse(R"({
    "name": "float_mod",
    "tensors": {"x": {"shape": [6], "init": {"value": 0}}, "m": {"shape": [1], "init": {"value": 1.5}}},
    "ops": [{"type": "mod", "inputs": ["x", "m"], "outputs": ["r"], "attrs": {"fmod": 1}}],
    "outputs": ["r"]
  })"));
  RunRequest request;
  const std::vector<float> x = {5.25F, -5.25F, 0.0F, 1.5F, -0.75F, 1000.0F};
  request.inputs.emplace("x", TensorValues{{6}, SharedHalves(floats_to_units(x, DType::kF16)), DType::kF16});
  const RunResult r = session.run(model, request);
  const std::vector<float> got = elements_as_floats(r.outputs.at("r").values.span(), DType::kF16);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(got[i] == std::fmod(x[i], 1.5F));

  CHECK_THROWS_WITH(session.load(json::parse(R"({
    "name": "float_python_mod",
    "tensors": {"x": {"shape": [6], "init": {"value": 0}}, "m": {"shape": [1], "init": {"value": 1.5}}},
    "ops": [{"type": "mod", "inputs": ["x", "m"], "outputs": ["r"]}],
    "outputs": ["r"]
  })")),
                    Catch::Contains("mod") && Catch::Contains("f16 operands need fmod 1"));
  CHECK_THROWS_WITH(session.load(json::parse(R"({
    "name": "mixed_add",
    "tensors": {"x": {"shape": [6], "init": {"value": 0}}, "i": {"shape": [6], "dtype": "int32", "init": {"value": 1}}},
    "ops": [{"type": "add", "inputs": ["i", "x"], "outputs": ["r"]}],
    "outputs": ["r"]
  })")),
                    Catch::Contains("add") && Catch::Contains("int32"));
}
