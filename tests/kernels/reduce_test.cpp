// reduce_sum / reduce_mean / reduce_max / reduce_min: every block of adjacent axes of the test shapes, with and
// without keepdims, under method and naive staging; reductions and rows larger than the local store; the method's
// [5, 4, 6] min over axis 1 by hand; and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

namespace {

const char* const kReductions[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"};

/// Every block of adjacent axes [first, last) of a rank-`rank` shape, as an axes list.
std::vector<nlohmann::json> adjacent_blocks(std::size_t rank) {
  std::vector<nlohmann::json> out;
  for (std::size_t first = 0; first < rank; ++first) {
    for (std::size_t last = first + 1; last <= rank; ++last) {
      nlohmann::json axes = nlohmann::json::array();
      for (std::size_t a = first; a < last; ++a) axes.push_back(a);
      out.push_back(axes);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("reductions over every block of adjacent axes match the reference under method and naive staging",
          "[kernels][reduce]") {
  for (const char* name : kReductions) {
    for (const Shape4& s4 : {Shape4{2, 3, 5, 7}, Shape4{3, 4, 4, 3}, Shape4{1, 1, 1, 1}, Shape4{2, 2, 3, 5}}) {
      const Shape s = test::shape_of(s4);
      for (const nlohmann::json& axes : adjacent_blocks(s.rank())) {
        for (int keepdims : {0, 1}) {
          const nlohmann::json attrs = {{"axes", axes}, {"keepdims", keepdims}};
          for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
            INFO(name << " " << s.str() << " " << attrs.dump() << " " << to_string(p));
            const auto r = run_op(name, {s}, attrs, p);
            INFO(r.fault);
            REQUIRE_FALSE(r.trapped);
            CHECK(r.max_excess <= 0);
          }
        }
      }
    }
  }
}

TEST_CASE("reduction output shapes follow keepdims and negative axes, and no axes reduces everything",
          "[kernels][reduce]") {
  const Shape x{5, 4, 6};
  CHECK(test::bind_op("reduce_min", {x}, {{"axes", {1}}})->output_shapes()[0] == Shape{5, 1, 6});
  CHECK(test::bind_op("reduce_min", {x}, {{"axes", {1}}, {"keepdims", 0}})->output_shapes()[0] == Shape{5, 6});
  CHECK(test::bind_op("reduce_sum", {x}, {{"axes", {-1, -2}}, {"keepdims", 0}})->output_shapes()[0] == Shape{5});
  CHECK(test::bind_op("reduce_mean", {x}, nullptr)->output_shapes()[0] == Shape{1, 1, 1});
  CHECK(test::bind_op("reduce_max", {x}, {{"keepdims", 0}})->output_shapes()[0] == Shape{});
  const auto r = run_op("reduce_max", {x}, {{"keepdims", 0}}, StagingPolicy::kMethod);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}

TEST_CASE("the method's example: a [5, 4, 6] min over axis 1, by hand", "[kernels][reduce]") {
  // x[i][r][j] = (r == (i + j) % 4 ? -1 : 1) * (i + j + r): the minimum of each (i, j) is -(i + j + (i + j) % 4).
  std::vector<float> x(5 * 4 * 6);
  for (int i = 0; i < 5; ++i)
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 6; ++j)
        x[static_cast<std::size_t>((i * 4 + r) * 6 + j)] =
            (r == (i + j) % 4 ? -1.0f : 1.0f) * static_cast<float>(i + j + r);
  const auto op = test::bind_op("reduce_min", {Shape{5, 4, 6}}, {{"axes", {1}}, {"keepdims", 0}});
  const auto ref = op->reference(std::vector<HostTensor>{HostTensor{Shape{5, 4, 6}, x}});
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 6; ++j)
      CHECK(ref[0].data[static_cast<std::size_t>(i * 6 + j)] == -static_cast<float>(i + j + (i + j) % 4));
  const auto r =
      run_op("reduce_min", {Shape{5, 4, 6}}, {{"axes", {1}}, {"keepdims", 0}}, StagingPolicy::kMethod, 0, 0, 7, {x});
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}

TEST_CASE("reductions longer than the local store and wide inner runs are cut into chunks", "[kernels][reduce]") {
  const Arch tiny = Arch::preset("tiny");  // 16 KiB ldm
  for (const char* name : kReductions) {
    INFO(name);
    // A trailing reduction of 40001 elements per row, and a middle one whose inner runs exceed the ldm.
    auto r = run_op(name, {Shape{3, 40001}}, {{"axes", {1}}}, StagingPolicy::kMethod, -2.0f, 2.0f, 3, {}, tiny);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
    r = run_op(name, {Shape{2, 7, 9001}}, {{"axes", {1}}}, StagingPolicy::kMethod, -2.0f, 2.0f, 3, {}, tiny);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
}

TEST_CASE("a large row reduction spreads over the cores of every group", "[kernels][reduce]") {
  const Arch arch = test::small_arch(2);
  const auto r = run_op("reduce_mean", {Shape{128, 768}}, {{"axes", {-1}}}, StagingPolicy::kMethod);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.cores_with_dma == arch.core_groups * arch.cores_per_group());
}

TEST_CASE("reduction attribute errors name the op and the culprit", "[kernels][reduce]") {
  const Shape x{2, 3, 4};
  CHECK_THROWS_WITH(test::bind_op("reduce_sum", {x}, {{"axes", {0, 2}}}),
                    Catch::Contains("reduce_sum") && Catch::Contains("not adjacent"));
  CHECK_THROWS_WITH(test::bind_op("reduce_sum", {x}, {{"axes", {1, -2}}}), Catch::Contains("axis 1 is listed twice"));
  CHECK_THROWS_WITH(test::bind_op("reduce_max", {x}, {{"axes", {3}}}), Catch::Contains("axes"));
  CHECK_THROWS_WITH(test::bind_op("reduce_max", {x}, {{"axes", nlohmann::json::array()}}),
                    Catch::Contains("axes is empty"));
  CHECK_THROWS_WITH(test::bind_op("reduce_min", {x}, {{"keepdims", 2}}), Catch::Contains("keepdims"));
  CHECK_THROWS_WITH(test::bind_op("reduce_min", {x}, {{"axis", 1}}), Catch::Contains("did you mean"));
}

TEST_CASE("reductions skip size-1 axes when checking adjacency, copy a rank-0 input and propagate NaN",
          "[kernels][reduce]") {
  // [2, 1, 3] over axes 0 and 2: the size-1 axis between them moves nothing.
  CHECK(test::bind_op("reduce_sum", {Shape{2, 1, 3}}, {{"axes", {0, 2}}, {"keepdims", 0}})->output_shapes()[0] ==
        Shape{1});
  auto r = run_op("reduce_sum", {Shape{2, 1, 3}}, {{"axes", {0, 2}}}, StagingPolicy::kMethod);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  r = run_op("reduce_mean", {Shape{}}, nullptr, StagingPolicy::kMethod);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* name : {"reduce_max", "reduce_min"}) {
    INFO(name);
    const auto op = test::bind_op(name, {Shape{2, 3}}, {{"axes", {1}}});
    const auto y = op->reference(std::vector<HostTensor>{HostTensor{Shape{2, 3}, {1, nan, 2, 3, 4, 5}}})[0].data;
    CHECK(std::isnan(y[0]));
    CHECK_FALSE(std::isnan(y[1]));
    r = run_op(name, {Shape{2, 3}}, {{"axes", {1}}}, StagingPolicy::kMethod, 0, 0, 7, {{1, nan, 2, 3, 4, 5}});
    CHECK(r.max_excess <= 0);
  }
}
