// 1-D class operators (relu, sigmoid, tanh, add, mul) under all three staging policies.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string_view>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

namespace {

/// An element-wise kind, its input range and attributes.
struct FunctionCase {
  const char* name;
  bool binary;
  float lo, hi;
  nlohmann::json attrs;
};

/// Each case on every test shape: within the reference's tolerance under both padding policies, and trapped
/// unpadded exactly where the buffer is odd.
void check_on_every_shape(const std::vector<FunctionCase>& cases) {
  for (const FunctionCase& c : cases) {
    for (const Shape4& s : test::test_shapes()) {
      const std::vector<Shape4> shapes = c.binary ? std::vector<Shape4>{s, s} : std::vector<Shape4>{s};
      INFO(c.name << " " << c.attrs.dump() << " " << s.str());
      for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        const auto r = run_op(c.name, shapes, c.attrs, p, c.lo, c.hi);
        INFO(to_string(p) << ": " << r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
      CHECK(run_op(c.name, shapes, c.attrs, StagingPolicy::kNone, c.lo, c.hi).trapped == (s.elements() % 2 == 1));
    }
  }
}

}  // namespace

TEST_CASE("1-D operators match the fp32 reference under method and naive, and trap under none exactly when odd",
          "[kernels][1d]") {
  for (const char* name : {"relu", "sigmoid", "tanh", "add", "mul"}) {
    const bool binary = std::string(name) == "add" || std::string(name) == "mul";
    for (const Shape4& s : test::test_shapes()) {
      std::vector<Shape4> shapes = binary ? std::vector<Shape4>{s, s} : std::vector<Shape4>{s};
      INFO(name << " " << s.str());
      for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        const auto r = run_op(name, shapes, {}, p);
        INFO(to_string(p) << ": " << r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
      const auto r = run_op(name, shapes, {}, StagingPolicy::kNone);
      CHECK(r.trapped == (s.elements() % 2 == 1));
      if (r.trapped) {
        CHECK_THAT(r.fault, Catch::Contains("pad this tensor at staging"));
      } else {
        CHECK(r.max_excess <= 0);
      }
    }
  }
}

TEST_CASE("a 1-D op spans several tiles and every core of every group", "[kernels][1d]") {
  const Arch arch = test::small_arch(2);
  const auto r = run_op("sigmoid", {Shape{400001}}, {}, StagingPolicy::kMethod, -4.0f, 4.0f, 7, {}, arch);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.cores_with_dma == arch.core_groups * arch.cores_per_group());
}

TEST_CASE("a small element-wise op spreads over cores in tiles of at least 1 KiB", "[kernels][1d]") {
  // 8192 elements (16 KiB) are one 16 KiB tile: dealt whole, one core would move them all. Cut to a tile per core
  // of at least 512 elements, they run on 16 cores; 100 elements still take one core.
  const Arch arch = Arch::preset("sw26010pro");
  const auto spread = run_op("relu", {Shape{8192}}, {}, StagingPolicy::kMethod, -2.0f, 2.0f, 7, {}, arch);
  REQUIRE_FALSE(spread.trapped);
  CHECK(spread.max_excess <= 0);
  CHECK(spread.cores_with_dma == 16);
  CHECK(spread.dma_requests == 32);  // a get and a put each
  const auto tiny = run_op("relu", {Shape{100}}, {}, StagingPolicy::kMethod, -2.0f, 2.0f, 7, {}, arch);
  REQUIRE_FALSE(tiny.trapped);
  CHECK(tiny.max_excess <= 0);
  CHECK(tiny.cores_with_dma == 1);
  // 64 tiles of 16 KiB would leave 320 of the 384 cores idle: every core takes one tile of 1,366 elements.
  const auto medium =
      run_op("add", {Shape{64 * 8192}, Shape{64 * 8192}}, {}, StagingPolicy::kMethod, -2.0f, 2.0f, 7, {}, arch);
  REQUIRE_FALSE(medium.trapped);
  CHECK(medium.max_excess <= 0);
  CHECK(medium.cores_with_dma == 384);
  CHECK(medium.dma_requests == 3 * 384);
  // A broadcast operand is read whole by every core with a tile, so a tile is at least as large: a [1152] gate
  // over [1152, 49] gives 49 tiles of 1,152 elements, not 111 of 512.
  const auto gated =
      run_op("mul", {Shape{1, 1152, 7, 7}, Shape{1, 1152, 1, 1}}, {}, StagingPolicy::kMethod, -2.0f, 2.0f, 7, {}, arch);
  REQUIRE_FALSE(gated.trapped);
  CHECK(gated.max_excess <= 0);
  CHECK(gated.cores_with_dma == 49);
}

TEST_CASE("element-wise tiles shrink to fit a 16 KiB ldm, with a resident or an expanded broadcast operand",
          "[kernels][1d]") {
  const Arch tiny = Arch::preset("tiny");
  const std::vector<Shape> one{Shape{3, 40001}}, two{Shape{3, 40001}, Shape{3, 40001}};
  for (const auto& [op, shapes] : {std::pair{"relu", one}, std::pair{"add", two}}) {
    INFO(op);
    const auto r = run_op(op, shapes, {}, StagingPolicy::kMethod, -2.0f, 2.0f, 3, {}, tiny);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
  const auto r = run_op("mul", {Shape{9, 1001}, Shape{1001}}, {}, StagingPolicy::kMethod, -2.0f, 2.0f, 3, {}, tiny);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  // A broadcast operand of more than a quarter of the ldm cannot be resident: it is expanded to the output's shape
  // and layout in device memory first, then streamed. Either operand position, padded (naive) or not.
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    for (const std::vector<Shape>& shapes :
         {std::vector<Shape>{Shape{4, 3001}, Shape{3001}}, std::vector<Shape>{Shape{3, 1, 2999}, Shape{3, 5, 2999}}}) {
      INFO(to_string(p) << " " << shapes[0].str() << " " << shapes[1].str());
      const auto big = run_op("mul", shapes, {}, p, -2.0f, 2.0f, 3, {}, tiny);
      REQUIRE_FALSE(big.trapped);
      CHECK(big.max_excess <= 0);
    }
  }
}

TEST_CASE(
    "exp, log, sqrt, reciprocal, erf, gelu, clip, sub, div, pow, hardsigmoid, hardswish, neg, abs, min and max match "
    "the reference on every test shape and policy",
    "[kernels][1d]") {
  const std::vector<FunctionCase> cases = {{"exp", false, -4.0f, 4.0f, nullptr},
                                           {"sqrt", false, 0.0f, 9.0f, nullptr},
                                           {"clip", false, -8.0f, 8.0f, {{"min", 0}, {"max", 6}}},
                                           {"clip", false, -8.0f, 8.0f, {{"max", -1.5}}},
                                           {"sub", true, -2.0f, 2.0f, nullptr},
                                           {"div", true, 0.5f, 2.0f, nullptr},
                                           {"log", false, 0.25f, 4.0f, nullptr},
                                           {"reciprocal", false, 0.5f, 2.0f, nullptr},
                                           {"erf", false, -3.0f, 3.0f, nullptr},
                                           {"gelu", false, -4.0f, 4.0f, nullptr},
                                           {"gelu", false, -4.0f, 4.0f, {{"approximate", "tanh"}}},
                                           {"pow", true, 0.5f, 2.0f, nullptr},
                                           {"hardsigmoid", false, -6.0f, 6.0f, nullptr},
                                           {"hardsigmoid", false, -3.0f, 3.0f, {{"alpha", 0.5}, {"beta", 0.25}}},
                                           {"hardswish", false, -5.0f, 5.0f, nullptr},
                                           {"neg", false, -3.0f, 3.0f, nullptr},
                                           {"abs", false, -3.0f, 3.0f, nullptr},
                                           {"min", true, -3.0f, 3.0f, nullptr},
                                           {"max", true, -3.0f, 3.0f, nullptr}};
  check_on_every_shape(cases);
}

TEST_CASE(
    "the rectifier family and softplus and softsign and sin and cos and floor and ceil and round and sign "
    "match the reference on every test shape and policy",
    "[kernels][1d]") {
  const std::vector<FunctionCase> cases = {{"leaky_relu", false, -4.0f, 4.0f, nullptr},
                                           {"leaky_relu", false, -4.0f, 4.0f, {{"alpha", 0.2}}},
                                           {"prelu", true, -4.0f, 4.0f, nullptr},
                                           {"elu", false, -6.0f, 3.0f, nullptr},
                                           {"elu", false, -6.0f, 3.0f, {{"alpha", 0.5}}},
                                           {"selu", false, -6.0f, 3.0f, nullptr},
                                           {"selu", false, -6.0f, 3.0f, {{"alpha", 2.0}, {"gamma", 0.5}}},
                                           {"celu", false, -6.0f, 3.0f, {{"alpha", 1.5}}},
                                           {"thresholded_relu", false, -2.0f, 3.0f, {{"alpha", 0.75}}},
                                           {"softplus", false, -12.0f, 12.0f, nullptr},
                                           {"softsign", false, -8.0f, 8.0f, nullptr},
                                           {"sin", false, -7.0f, 7.0f, nullptr},
                                           {"cos", false, -7.0f, 7.0f, nullptr},
                                           {"floor", false, -8.0f, 8.0f, nullptr},
                                           {"ceil", false, -8.0f, 8.0f, nullptr},
                                           {"round", false, -8.0f, 8.0f, nullptr},
                                           {"sign", false, -3.0f, 3.0f, nullptr}};
  check_on_every_shape(cases);
}

TEST_CASE("the rectifier family at known values and prelu with a per-channel slope", "[kernels][1d]") {
  const HostTensor x{Shape{5}, {-2.0f, -0.5f, 0.0f, 0.5f, 40.0f}};
  const auto value = [&](const char* name, nlohmann::json attrs = nullptr) {
    return test::bind_op(name, {Shape{5}}, std::move(attrs))->reference(std::vector<HostTensor>{x})[0].data;
  };
  CHECK(value("leaky_relu") == std::vector<float>{-0.02f, -0.005f, 0.0f, 0.5f, 40.0f});
  CHECK(value("thresholded_relu", {{"alpha", 0.5}}) == std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f, 40.0f});
  CHECK(value("softsign") == std::vector<float>{-2.0f / 3.0f, -0.5f / 1.5f, 0.0f, 0.5f / 1.5f, 40.0f / 41.0f});
  const auto elu = value("elu");
  CHECK(elu[0] == Approx(std::exp(-2.0) - 1.0));
  CHECK(elu[4] == 40.0f);
  const auto selu = value("selu");  // ONNX's default alpha and gamma
  CHECK(selu[0] == Approx(1.0507009873554805 * 1.6732632423543772 * (std::exp(-2.0) - 1.0)));
  CHECK(selu[3] == Approx(1.0507009873554805 * 0.5));
  const auto softplus = value("softplus");
  CHECK(softplus[2] == Approx(std::log(2.0)));
  CHECK(softplus[4] == 40.0f);  // no overflow of e^x on the way
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    const auto r = run_op("prelu", {Shape{2, 3, 5, 7}, Shape{3, 1, 1}}, nullptr, p, -2.0f, 2.0f);
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
  const HostTensor halves{Shape{6}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}};
  const auto rounded = test::bind_op("round", {Shape{6}})->reference(std::vector<HostTensor>{halves})[0].data;
  CHECK(rounded == std::vector<float>{-2.0f, -2.0f, -0.0f, 0.0f, 2.0f, 2.0f});  // halves to even
  const auto r_round = run_op("round", {Shape{6}}, nullptr, StagingPolicy::kMethod, 0, 0, 7, {halves.data});
  CHECK(r_round.max_excess <= 0);
  CHECK(value("sign") == std::vector<float>{-1.0f, -1.0f, 0.0f, 1.0f, 1.0f});
  CHECK_THROWS_WITH(test::bind_op("celu", {Shape{4}}, {{"alpha", 0}}), Catch::Contains("celu: alpha must not be 0"));
  CHECK_THROWS_WITH(test::bind_op("leaky_relu", {Shape{4}}, {{"alpha", 1e9}}),
                    Catch::Contains("alpha 1000000000 must be a finite fp16 value"));
  CHECK_THROWS_WITH(test::bind_op("selu", {Shape{4}}, {{"beta", 1}}), Catch::Contains("beta"));
}

TEST_CASE("sub and div broadcast a [C, 1, 1], a [W] and a scalar operand over NCHW", "[kernels][1d][broadcast]") {
  for (const char* name : {"sub", "div"}) {
    for (const Shape& b : {Shape{3, 1, 1}, Shape{7}, Shape{}}) {
      for (bool swapped : {false, true}) {  // the broadcast operand on either side
        const std::vector<Shape> shapes =
            swapped ? std::vector<Shape>{b, Shape{2, 3, 5, 7}} : std::vector<Shape>{Shape{2, 3, 5, 7}, b};
        INFO(name << " " << b.str() << (swapped ? " first" : " second"));
        for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
          const auto r = test::run_op(name, shapes, nullptr, p, 0.5f, 2.0f);
          INFO(r.fault);
          REQUIRE_FALSE(r.trapped);
          CHECK(r.max_excess <= 0);
        }
      }
    }
  }
}

TEST_CASE("hardsigmoid, hardswish, min and max at known values, min and max broadcasting", "[kernels][1d]") {
  const HostTensor x{Shape{5}, {-4.0f, -3.0f, 0.0f, 1.5f, 4.0f}};
  const auto hs = test::bind_op("hardsigmoid", {Shape{5}})->reference(std::vector<HostTensor>{x})[0].data;
  CHECK(hs == std::vector<float>{0.0f, 0.0f, 0.5f, 0.8f, 1.0f});
  const auto hw = test::bind_op("hardswish", {Shape{5}})->reference(std::vector<HostTensor>{x})[0].data;
  CHECK(hw == std::vector<float>{-0.0f, -0.0f, 0.0f, 1.5f * 4.5f / 6.0f, 4.0f});
  const HostTensor y{Shape{}, {1.0f}};
  const auto mn = test::bind_op("min", {Shape{5}, Shape{}})->reference(std::vector<HostTensor>{x, y})[0].data;
  CHECK(mn == std::vector<float>{-4.0f, -3.0f, 0.0f, 1.0f, 1.0f});
  const auto mx = test::bind_op("max", {Shape{5}, Shape{}})->reference(std::vector<HostTensor>{x, y})[0].data;
  CHECK(mx == std::vector<float>{1.0f, 1.0f, 1.0f, 1.5f, 4.0f});
  for (const char* name : {"min", "max"}) {
    INFO(name);
    const auto r = run_op(name, {Shape{2, 3, 5, 7}, Shape{3, 1, 1}}, nullptr, StagingPolicy::kMethod);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
  CHECK_THROWS_WITH(test::bind_op("hardsigmoid", {Shape{4}}, {{"alpha", 1e9}}), Catch::Contains("finite fp16"));
}

TEST_CASE("element-wise attribute and shape errors name the op", "[kernels][1d]") {
  CHECK_THROWS_WITH(test::bind_op("clip", {Shape{4}}, {{"min", 2}, {"max", 1}}), Catch::Contains("clip: min 2"));
  CHECK_THROWS_WITH(test::bind_op("clip", {Shape{4}}, {{"maxx", 1}}), Catch::Contains("did you mean"));
  CHECK_THROWS_WITH(test::bind_op("sub", {Shape{2, 3}, Shape{4}}),
                    Catch::Contains("sub") && Catch::Contains("broadcast"));
  CHECK_THROWS_WITH(test::bind_op("exp", {Shape{2}, Shape{2}}), Catch::Contains("takes 1 input, got 2"));
  CHECK_THROWS_WITH(test::bind_op("gelu", {Shape{2}}, {{"approximate", "fast"}}),
                    Catch::Contains("gelu: approximate must be \"none\" or \"tanh\", got \"fast\""));
}

TEST_CASE("gelu's references agree with known values, and pow takes a broadcast scalar exponent", "[kernels][1d]") {
  // gelu(x) = x * Phi(x): Phi(1) = 0.841344746, Phi(-2) = 0.022750132; the tanh form is within 1e-3 of it.
  const std::vector<float> x{1.0f, -2.0f, 0.0f};
  for (const char* approximate : {"none", "tanh"}) {
    const auto op = test::bind_op("gelu", {Shape{3}}, {{"approximate", approximate}});
    const auto y = op->reference(std::vector<HostTensor>{HostTensor{Shape{3}, x}})[0].data;
    INFO(approximate);
    CHECK(y[0] == Approx(0.841344746).margin(1e-3));
    CHECK(y[1] == Approx(-2 * 0.022750132).margin(1e-3));
    CHECK(y[2] == 0.0f);
  }
  const auto r =
      run_op("pow", {Shape{2, 3, 5, 7}, Shape{}}, nullptr, StagingPolicy::kMethod, 0.5f, 2.0f, 7, {{}, {2.0f}});
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}

TEST_CASE("log, reciprocal and pow give ONNX's infinities and NaNs at the edges of their domains", "[kernels][1d]") {
  const float inf = std::numeric_limits<float>::infinity();
  // log(0) = -inf, log(-1) = NaN; 1/0 = inf, 1/-0 = -inf; (-8)^(1/3) = NaN, 0^-1 = inf.
  auto r = run_op("log", {Shape{4}}, nullptr, StagingPolicy::kMethod, 0, 0, 7, {{0.0f, -1.0f, 1.0f, inf}});
  CHECK(r.max_excess <= 0);
  r = run_op("reciprocal", {Shape{4}}, nullptr, StagingPolicy::kMethod, 0, 0, 7, {{0.0f, -0.0f, 2.0f, inf}});
  CHECK(r.max_excess <= 0);
  r = run_op("pow", {Shape{4}, Shape{4}}, nullptr, StagingPolicy::kMethod, 0, 0, 7,
             {{-8.0f, 0.0f, 2.0f, -2.0f}, {1.0f / 3.0f, -1.0f, 10.0f, 3.0f}});
  CHECK(r.max_excess <= 0);
}

TEST_CASE("an element-wise op's loop over a run computes exactly its per-element function", "[kernels][1d]") {
  // Fused kernels call FusionForm::run once per row; the values must be the bits fn gives element by element,
  // for runs and for a value repeated across the run (step 0), on ordinary and special inputs, NaNs included.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float negative_nan = std::bit_cast<float>(0xffc00000u), payload_nan = std::bit_cast<float>(0x7fc01234u);
  std::vector<float> a, b;
  for (int i = -40; i < 40; ++i)
    a.push_back(static_cast<float>(i) * 0.37f), b.push_back(static_cast<float>(i) * -0.21f);
  for (const float v : {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                        nan, negative_nan, payload_nan, 1e-30f, 65504.0f}) {
    a.push_back(v), b.push_back(1.5f), a.push_back(2.5f), b.push_back(v);
  }
  for (const auto& [x, y] : {std::pair{negative_nan, nan}, {nan, negative_nan}, {payload_nan, negative_nan}}) {
    a.push_back(x), b.push_back(y);  // two NaNs: which one comes out must not depend on the loop
  }
  const Shape shape({a.size()});
  const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
  struct Case {
    const char* op;
    nlohmann::json attrs;
  };
  const std::vector<Case> cases{{"relu", {}},
                                {"sigmoid", {}},
                                {"tanh", {}},
                                {"exp", {}},
                                {"log", {}},
                                {"sqrt", {}},
                                {"reciprocal", {}},
                                {"erf", {}},
                                {"gelu", {}},
                                {"gelu", {{"approximate", "tanh"}}},
                                {"clip", {{"min", -1.0}, {"max", 2.0}}},
                                {"add", {}},
                                {"sub", {}},
                                {"mul", {}},
                                {"div", {}},
                                {"pow", {}},
                                {"min", {}},
                                {"max", {}},
                                {"prelu", {}},
                                {"hardsigmoid", {}},
                                {"hardswish", {}},
                                {"neg", {}},
                                {"abs", {}},
                                {"leaky_relu", {{"alpha", 0.1}}},
                                {"elu", {}},
                                {"selu", {}},
                                {"celu", {{"alpha", 1.5}}},
                                {"thresholded_relu", {{"alpha", 0.5}}},
                                {"softplus", {}},
                                {"softsign", {}},
                                {"sin", {}},
                                {"cos", {}},
                                {"floor", {}},
                                {"ceil", {}},
                                {"round", {}},
                                {"sign", {}}};
  const std::set<std::string_view> binaries{"add", "sub", "mul", "div", "pow", "min", "max", "prelu"};
  for (const Case& c : cases) {
    const bool binary = binaries.contains(c.op);
    const nlohmann::json attrs = c.attrs.is_null() ? nlohmann::json::object() : c.attrs;
    const auto op = test::bind_op(c.op, binary ? std::vector<Shape>{shape, shape} : std::vector<Shape>{shape}, attrs);
    const FusionForm form = op->fusion_form();
    REQUIRE(form.kind == FusionForm::Kind::kPointwise);
    REQUIRE(form.run);
    for (const auto& [a_step, b_step] : {std::pair<std::size_t, std::size_t>{1, 1}, {1, 0}, {0, 1}, {0, 0}}) {
      INFO(c.op << " " << attrs.dump() << " steps " << a_step << "," << b_step);
      std::vector<float> y(a.size());
      form.run(a.data(), a_step, binary ? b.data() : nullptr, b_step, y.data(), y.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        differ += bits(y[i]) != bits(form.fn(a[a_step * i], binary ? b[b_step * i] : 0.0f));
      }
      CHECK(differ == 0);
    }
  }
  // Add and mul return their first operand's NaN when both are NaN, as the scalar arithmetic always did.
  for (const char* op : {"add", "mul"}) {
    const auto bound = test::bind_op(op, {Shape({1}), Shape({1})}, nlohmann::json::object());
    CHECK(bits(bound->fusion_form().fn(negative_nan, nan)) == bits(negative_nan));
    CHECK(bits(bound->fusion_form().fn(nan, negative_nan)) == bits(nan));
  }
}
