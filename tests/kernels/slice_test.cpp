// slice and expand against their references: ONNX's clamping and negative indices and steps, huge bounds, views on
// every core, and the errors (an empty result, a step of 0, an axis twice, shapes that do not broadcast).
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>

#include "ldmsim/kernels/slice_axis.hpp"
#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

namespace {

void check_runs(const std::string& op, const Shape& s, const nlohmann::json& attrs,
                const Arch& arch = test::small_arch()) {
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    INFO(op << " " << s.str() << " " << attrs.dump() << " " << to_string(p));
    const auto r = run_op(op, {s}, attrs, p, -2.0f, 2.0f, 7, {}, arch);
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
}

}  // namespace

TEST_CASE("slice follows ONNX: starts, ends, axes, steps, negative indices and steps, clamping", "[kernels][slice]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const Shape s{3, 5, 7, 9};
  check_runs("slice", s, {{"starts", {1}}, {"ends", {kMax}}, {"axes", {1}}});                    // x[:, 1:]
  check_runs("slice", s, {{"starts", {0, 2}}, {"ends", {1, -1}}, {"axes", {0, -1}}});            // x[0:1, ..., 2:-1]
  check_runs("slice", s, {{"starts", {1}}, {"ends", {9}}, {"axes", {3}}, {"steps", {2}}});       // odd step on the last
  check_runs("slice", s, {{"starts", {-1}}, {"ends", {kMin}}, {"axes", {3}}, {"steps", {-1}}});  // x[..., ::-1]
  check_runs("slice", s, {{"starts", {6, 4}}, {"ends", {0, -100}}, {"axes", {2, 1}}, {"steps", {-3, -2}}});
  check_runs("slice", s, {{"starts", {0}}, {"ends", {1}}, {"axes", {2}}, {"steps", {kMax}}});  // one element
  check_runs("slice", Shape{2, 3, 768}, {{"starts", {512}}, {"ends", {768}}, {"axes", {2}}});  // q/k/v split
  // A slice larger than the local store (tiny: 16 KiB).
  check_runs("slice", Shape{3, 9001}, {{"starts", {1, 3}}, {"ends", {3, 9000}}}, Arch::preset("tiny"));
  check_runs("slice", Shape{3, 9001}, {{"starts", {0, 8999}}, {"ends", {3, 2}}, {"steps", {1, -5}}},
             Arch::preset("tiny"));
  const auto op = test::bind_op("slice", {s}, {{"starts", {-1}}, {"ends", {kMin}}, {"axes", {3}}, {"steps", {-2}}});
  CHECK(op->output_shapes()[0] == Shape{3, 5, 7, 5});
  const auto small = test::bind_op("slice", {Shape{6}}, {{"starts", {-1}}, {"ends", {kMin}}, {"steps", {-2}}});
  CHECK(small->reference(std::vector<HostTensor>{HostTensor{Shape{6}, {0, 1, 2, 3, 4, 5}}})[0].data ==
        std::vector<float>{5, 3, 1});
}

TEST_CASE("slice_axis clamps and counts at the edges of int64 without overflow", "[kernels][slice]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const auto check = [](SliceAxis a, std::int64_t first, std::uint64_t count, std::int64_t step) {
    CHECK(a.first == first);
    CHECK(a.count == count);
    CHECK(a.step == step);
  };
  check(slice_axis(0, kMax, kMax, 7), 0, 1, 1);   // a huge step takes the first element
  check(slice_axis(-1, kMin, kMin, 5), 4, 1, 1);  // and backwards the last
  check(slice_axis(kMin, kMax, 3, 7), 0, 3, 3);   // 0, 3, 6
  check(slice_axis(-1, kMin, -2, 6), 5, 3, -2);   // 5, 3, 1
  check(slice_axis(2, 2, 1, 6), 2, 0, 1);         // empty
  check(slice_axis(5, -100, -1, 6), 5, 6, -1);    // the whole axis reversed
  check(slice_axis(0, 3, 1, 0), 0, 0, 1);         // an empty axis
}

TEST_CASE("slice uses every core of every group on a large tensor", "[kernels][slice]") {
  const Arch arch = test::small_arch(2);
  const auto r = run_op("slice", {Shape{64, 4001}}, {{"starts", {1}}, {"ends", {4000}}, {"axes", {1}}},
                        StagingPolicy::kMethod, -2.0f, 2.0f, 7, {}, arch);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.cores_with_dma == arch.core_groups * arch.cores_per_group());
}

TEST_CASE("slice errors name the op and the attribute", "[kernels][slice]") {
  CHECK_THROWS_WITH(test::bind_op("slice", {Shape{4, 5}}, {{"starts", {3}}, {"ends", {3}}}), Catch::Contains("empty"));
  CHECK_THROWS_WITH(test::bind_op("slice", {Shape{4, 5}}, {{"starts", {0}}, {"ends", {3}}, {"steps", {0}}}),
                    Catch::Contains("step of axis 0 is 0"));
  CHECK_THROWS_WITH(test::bind_op("slice", {Shape{4, 5}}, {{"starts", {0, 0}}, {"ends", {3, 3}}, {"axes", {1, -1}}}),
                    Catch::Contains("axis 1 is sliced twice"));
  CHECK_THROWS_WITH(test::bind_op("slice", {Shape{4, 5}}, {{"starts", {0}}, {"ends", {3}}, {"axes", {2}}}),
                    Catch::Contains("outside rank 2"));
  CHECK_THROWS_WITH(test::bind_op("slice", {Shape{4, 5}}, {{"starts", {0}}, {"ends", {3, 4}}}),
                    Catch::Contains("one end per start"));
  CHECK_THROWS_WITH(test::bind_op("slice", {Shape{4, 5}}, {{"ends", {3}}}), Catch::Contains("starts and ends"));
}

TEST_CASE("expand repeats size-1 axes (both ways, as ONNX Expand)", "[kernels][expand]") {
  check_runs("expand", Shape{1, 5, 1}, {{"shape", {3, 1, 7}}});
  check_runs("expand", Shape{7}, {{"shape", {2, 3, 1}}});
  check_runs("expand", Shape{3, 1}, {{"shape", {2, 1, 4001}}}, Arch::preset("tiny"));
  const auto op = test::bind_op("expand", {Shape{3, 1}}, {{"shape", {2, 1, 2}}});
  CHECK(op->output_shapes()[0] == Shape{2, 3, 2});
  CHECK(op->reference(std::vector<HostTensor>{HostTensor{Shape{3, 1}, {1, 2, 3}}})[0].data ==
        std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  CHECK_THROWS_WITH(test::bind_op("expand", {Shape{3, 2}}, {{"shape", {4, 5}}}), Catch::Contains("expand"));
}
