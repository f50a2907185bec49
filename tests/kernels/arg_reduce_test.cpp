// arg_max / arg_min: indices of the largest and smallest element along one axis as int32 words, for the axis
// innermost (short rows gathered several at a time, and rows longer than the staging buffer), in the middle and
// outermost, under method and naive
// staging; ties to the first index or with select_last_index to the last; NaN beyond every number; the output
// shapes; and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_harness.hpp"

using namespace ldmsim;

namespace {

/// The op run on `x` (values of `shape`, exact in fp16) under `policy`, its output words read back as integers.
std::vector<std::int32_t> run_indices(const std::string& name, const Shape& shape, const std::vector<float>& x,
                                      const nlohmann::json& attrs, StagingPolicy policy) {
  Machine m{test::small_arch()};
  const auto op = test::bind_op(name, {shape}, attrs);
  std::vector<f16> h(x.size());
  floats_to_halves(x, h);
  const DeviceTensor in = stage_in(m, "x", choose_plan(op->view(0), op->padding(0), policy), h);
  const DeviceTensor out = allocate_tensor(m, "y", choose_plan(op->view(1), op->padding(1), policy));
  op->run(m, std::vector<DeviceTensor>{in}, std::vector<DeviceTensor>{out}, name);
  const std::vector<f16> units = stage_out(m, out);
  REQUIRE(units.size() == 2 * op->output_shapes()[0].elements());
  std::vector<std::int32_t> got(units.size() / 2);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::uint32_t word =
        static_cast<std::uint32_t>(units[2 * i].bits) | (static_cast<std::uint32_t>(units[2 * i + 1].bits) << 16);
    got[i] = static_cast<std::int32_t>(word);
  }
  return got;
}

/// The op's fp32 reference on `x`, as integers.
std::vector<std::int32_t> reference_indices(const std::string& name, const Shape& shape, const std::vector<float>& x,
                                            const nlohmann::json& attrs) {
  const auto op = test::bind_op(name, {shape}, attrs);
  const auto ref = op->reference(std::vector<HostTensor>{HostTensor{shape, x}});
  std::vector<std::int32_t> out;
  for (const float v : ref[0].data) out.push_back(static_cast<std::int32_t>(v));
  return out;
}

/// Small integers (exact in fp16) with many ties.
std::vector<float> tied_values(std::size_t n, unsigned seed) {
  std::vector<float> x(n);
  std::uint32_t s = seed;
  for (float& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int>((s >> 16) % 7) - 3);
  }
  return x;
}

}  // namespace

TEST_CASE("arg_max and arg_min give the reference's indices on every axis under method and naive staging",
          "[kernels][arg]") {
  // [3, 20000, 1] innermost and longer than the staging buffer of a 64 KiB local store.
  // [2, 3, 20000] over axis 1: cores own several tiles of outputs.
  for (const Shape& shape : {Shape{2, 3, 5, 7}, Shape{4, 9, 33}, Shape{3, 20000}, Shape{130}, Shape{2, 3, 20000}}) {
    const std::vector<float> x = tied_values(shape.elements(), 11);
    for (const char* name : {"arg_max", "arg_min"}) {
      for (std::int64_t axis = -1; axis < static_cast<std::int64_t>(shape.rank()); ++axis) {
        for (int last : {0, 1}) {
          const nlohmann::json attrs = {{"axis", axis}, {"keepdims", 0}, {"select_last_index", last}};
          const auto want = reference_indices(name, shape, x, attrs);
          for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
            INFO(name << " " << shape.str() << " " << attrs.dump() << " " << to_string(p));
            CHECK(run_indices(name, shape, x, attrs, p) == want);
          }
        }
      }
    }
  }
}

TEST_CASE("arg_max takes the first of equal values unless told the last and counts NaN beyond every number",
          "[kernels][arg]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Rows of [4, 5], reduced along axis 1.
  const std::vector<float> x = {1,    3,    3,  0,    -1,   // a tie of maxima: 1 first, 2 last
                                2,    2,    2,  2,    2,    // all equal: 0 first, 4 last
                                1,    nan,  5,  nan,  inf,  // NaN beyond inf: 1 first, 3 last
                                -inf, -inf, -2, -inf, -inf};
  const Shape shape{4, 5};
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    INFO(to_string(p));
    CHECK(run_indices("arg_max", shape, x, {{"axis", 1}}, p) == std::vector<std::int32_t>{1, 0, 1, 2});
    CHECK(run_indices("arg_max", shape, x, {{"axis", 1}, {"select_last_index", 1}}, p) ==
          std::vector<std::int32_t>{2, 4, 3, 2});
    CHECK(run_indices("arg_min", shape, x, {{"axis", 1}}, p) == std::vector<std::int32_t>{4, 0, 1, 0});
    CHECK(run_indices("arg_min", shape, x, {{"axis", 1}, {"select_last_index", 1}}, p) ==
          std::vector<std::int32_t>{4, 4, 3, 4});
    // The same rows as columns of [5, 4], reduced along axis 0 (one run of outputs per index along the axis).
    std::vector<float> columns(x.size());
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t c = 0; c < 5; ++c) columns[c * 4 + r] = x[r * 5 + c];
    CHECK(run_indices("arg_max", Shape{5, 4}, columns, {{"axis", 0}}, p) == std::vector<std::int32_t>{1, 0, 1, 2});
    CHECK(run_indices("arg_min", Shape{5, 4}, columns, {{"axis", 0}, {"select_last_index", 1}}, p) ==
          std::vector<std::int32_t>{4, 4, 3, 4});
  }
}

TEST_CASE("arg_max output shapes follow keepdims and negative axes and bad attributes are refused", "[kernels][arg]") {
  const Shape x{5, 4, 6};
  CHECK(test::bind_op("arg_max", {x}, nullptr)->output_shapes()[0] == Shape{1, 4, 6});
  CHECK(test::bind_op("arg_min", {x}, {{"axis", -2}, {"keepdims", 0}})->output_shapes()[0] == Shape{5, 6});
  const auto op = test::bind_op("arg_max", {x}, {{"axis", 2}});
  CHECK(op->dtype(0) == DType::kF16);
  CHECK(op->dtype(1) == DType::kI32);
  CHECK_THROWS_WITH(test::bind_op("arg_max", {x}, {{"axis", 3}}), Catch::Contains("axis"));
  CHECK_THROWS_WITH(test::bind_op("arg_max", {Shape{2, 3000000000ULL}}, {{"axis", 1}}),
                    Catch::Contains("longer than an int32 index reaches"));
  CHECK_THROWS_WITH(test::bind_op("arg_max", {Shape{}}, nullptr), Catch::Contains("at least one axis"));
  CHECK_THROWS_WITH(test::bind_op("arg_min", {x}, {{"select_last_index", 2}}), Catch::Contains("select_last_index"));
  CHECK_THROWS_WITH(test::registry().bind("arg_max", JsonField(nullptr, "test", "attrs"), std::vector<Shape>{x},
                                          std::vector<DType>{DType::kI32}),
                    Catch::Contains("computes on f16 tensors"));
}
