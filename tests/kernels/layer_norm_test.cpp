// layer_norm against its reference: every test shape normalised over the last axis and over all but the first,
// with and without a bias, under method and naive staging; rows longer than the local store; a hand-checked row;
// and the errors.
#include <catch2/catch.hpp>
#include <vector>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

TEST_CASE("layer_norm matches the reference over the last axis and over all but the first", "[kernels][layer_norm]") {
  for (const Shape4& s4 : test::test_shapes()) {
    const Shape s = test::shape_of(s4);
    for (const std::int64_t axis : {-1, 1}) {
      const std::size_t from = axis < 0 ? s.rank() - 1 : 1;
      const Shape params{s.product(from, s.rank())};
      for (const bool bias : {false, true}) {
        const std::vector<Shape> shapes = bias ? std::vector<Shape>{s, params, params} : std::vector<Shape>{s, params};
        for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
          INFO(s.str() << " axis " << axis << (bias ? " with bias " : " ") << to_string(p));
          const auto r = run_op("layer_norm", shapes, {{"axis", axis}}, p);
          INFO(r.fault);
          REQUIRE_FALSE(r.trapped);
          CHECK(r.max_excess <= 0);
        }
      }
    }
  }
}

TEST_CASE("layer_norm of a row by hand, and rows longer than the local store", "[kernels][layer_norm]") {
  // x = 1, 2, 3, 4: mean 2.5, variance 1.25; with epsilon 0.75 the divisor is sqrt(2).
  const auto op = test::bind_op("layer_norm", {Shape{1, 4}, Shape{4}, Shape{4}}, {{"epsilon", 0.75}});
  const auto y = op->reference(std::vector<HostTensor>{
      HostTensor{Shape{1, 4}, {1, 2, 3, 4}}, HostTensor{Shape{4}, {1, 1, 2, 2}}, HostTensor{Shape{4}, {0, 0, 0, 1}}})[0]
                     .data;
  const double k = 1 / std::sqrt(2.0);
  CHECK(y[0] == Approx(-1.5 * k));
  CHECK(y[1] == Approx(-0.5 * k));
  CHECK(y[2] == Approx(2 * 0.5 * k));
  CHECK(y[3] == Approx(2 * 1.5 * k + 1));
  const auto r = run_op("layer_norm", {Shape{3, 40001}, Shape{40001}, Shape{40001}}, nullptr, StagingPolicy::kMethod,
                        -2.0f, 2.0f, 3, {}, Arch::preset("tiny"));
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}

TEST_CASE("layer_norm errors name the op and the culprit", "[kernels][layer_norm]") {
  CHECK_THROWS_WITH(test::bind_op("layer_norm", {Shape{2, 3}, Shape{2}}),
                    Catch::Contains("layer_norm: scale must have the normalized shape [3]"));
  CHECK_THROWS_WITH(test::bind_op("layer_norm", {Shape{2, 3}, Shape{3}, Shape{3, 1}}), Catch::Contains("bias must"));
  CHECK_THROWS_WITH(test::bind_op("layer_norm", {Shape{2, 3}, Shape{3}}, {{"epsilon", 0}}),
                    Catch::Contains("epsilon must be in (0, 1]"));
  CHECK_THROWS_WITH(test::bind_op("layer_norm", {Shape{2, 3}, Shape{3}}, {{"axis", 2}}), Catch::Contains("axis"));
  CHECK_THROWS_WITH(test::bind_op("layer_norm", {Shape{2, 3}}), Catch::Contains("takes 2 to 3 inputs, got 1"));
}
