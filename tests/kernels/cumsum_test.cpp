// cumsum along the last axis: fp16 and int32 rows, inclusive and exclusive, forward and reversed, rows shorter
// than a core's share and rows longer than a share (a core's first row begun by another core), under method and
// naive staging; int32 sums wrapping as two's complement; and the errors.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "op_harness.hpp"

using namespace ldmsim;

namespace {

/// The op run on `x` (values of `shape` held as `type`) under `policy`, its output read back as values.
std::vector<double> run_cumsum(const Shape& shape, const std::vector<double>& x, DType type,
                               const nlohmann::json& attrs, StagingPolicy policy) {
  Machine m{test::small_arch()};
  const auto op = test::registry().bind("cumsum", JsonField(attrs, "test", "attrs"), std::vector<Shape>{shape},
                                        std::vector<DType>{type});
  std::vector<f16> units;
  if (type == DType::kI32) {
    std::vector<std::int32_t> words(x.begin(), x.end());
    units = words_to_units(words);
  } else {
    for (const double v : x) units.push_back(f16(static_cast<float>(v)));
  }
  const DeviceTensor in = stage_in(m, "x", choose_plan(op->view(0), op->padding(0), policy), units);
  const DeviceTensor out = allocate_tensor(m, "y", choose_plan(op->view(1), op->padding(1), policy));
  op->run(m, std::vector<DeviceTensor>{in}, std::vector<DeviceTensor>{out}, "cumsum");
  const std::vector<f16> got = stage_out(m, out);
  std::vector<double> values;
  for (std::size_t i = 0; i < shape.elements(); ++i) values.push_back(element_value(got, type, i));
  return values;
}

/// The op's reference on `x`.
std::vector<double> reference(const Shape& shape, const std::vector<double>& x, DType type,
                              const nlohmann::json& attrs) {
  const auto op = test::registry().bind("cumsum", JsonField(attrs, "test", "attrs"), std::vector<Shape>{shape},
                                        std::vector<DType>{type});
  const auto ref = op->reference(std::vector<HostTensor>{HostTensor{shape, std::vector<float>(x.begin(), x.end())}});
  return {ref[0].data.begin(), ref[0].data.end()};
}

/// Small integers, exact in fp16 and in their sums.
std::vector<double> small_integers(std::size_t n) {
  std::vector<double> x(n);
  std::uint32_t s = 5;
  for (double& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<double>(static_cast<int>((s >> 16) % 9) - 4);
  }
  return x;
}

}  // namespace

TEST_CASE("cumsum of fp16 and int32 rows matches the reference inclusive and exclusive and reversed",
          "[kernels][cumsum]") {
  // Rows of 7 (several per share), of 3001 and 20000 (longer than a share: a core starts inside a row).
  for (const Shape& shape : {Shape{3, 5, 7}, Shape{2, 3001}, Shape{20000}, Shape{1}}) {
    const std::vector<double> x = small_integers(shape.elements());
    for (const DType type : {DType::kF16, DType::kI32}) {
      for (int exclusive : {0, 1}) {
        for (int reverse : {0, 1}) {
          const nlohmann::json attrs = {{"exclusive", exclusive}, {"reverse", reverse}};
          const std::vector<double> want = reference(shape, x, type, attrs);
          for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
            INFO(shape.str() << " " << to_string(type) << " " << attrs.dump() << " " << to_string(p));
            CHECK(run_cumsum(shape, x, type, attrs, p) == want);
          }
        }
      }
    }
  }
}

TEST_CASE("cumsum by hand: exclusive and reversed rows and int32 sums that wrap", "[kernels][cumsum]") {
  const Shape rows{2, 4};
  const std::vector<double> x = {1, 2, 3, 4, 10, 20, 30, 40};
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    INFO(to_string(p));
    CHECK(run_cumsum(rows, x, DType::kF16, nullptr, p) == std::vector<double>{1, 3, 6, 10, 10, 30, 60, 100});
    CHECK(run_cumsum(rows, x, DType::kI32, {{"exclusive", 1}}, p) == std::vector<double>{0, 1, 3, 6, 0, 10, 30, 60});
    CHECK(run_cumsum(rows, x, DType::kF16, {{"reverse", 1}}, p) == std::vector<double>{10, 9, 7, 4, 100, 90, 70, 40});
    CHECK(run_cumsum(rows, x, DType::kI32, {{"reverse", 1}, {"exclusive", 1}}, p) ==
          std::vector<double>{9, 7, 4, 0, 90, 70, 40, 0});
    // 2^31 - 1 + 1 wraps to -2^31, as an int32 sum does in numpy and PyTorch.
    CHECK(run_cumsum(Shape{3}, {2147483647.0, 1, 1}, DType::kI32, nullptr, p) ==
          std::vector<double>{2147483647.0, -2147483648.0, -2147483647.0});
  }
}

TEST_CASE("cumsum refuses bool inputs and unknown attributes", "[kernels][cumsum]") {
  const auto bind = [](DType type, const nlohmann::json& attrs) {
    return test::registry().bind("cumsum", JsonField(attrs, "test", "attrs"), std::vector<Shape>{Shape{4}},
                                 std::vector<DType>{type});
  };
  CHECK(bind(DType::kI32, nullptr)->dtype(1) == DType::kI32);
  CHECK_THROWS_WITH(bind(DType::kBool, nullptr), Catch::Contains("expected f16 or int32"));
  CHECK_THROWS_WITH(bind(DType::kF16, {{"axis", 0}}), Catch::Contains("axis"));
  CHECK_THROWS_WITH(bind(DType::kF16, {{"reverse", 2}}), Catch::Contains("reverse"));
}
