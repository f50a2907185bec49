// top_k: each row's k largest (smallest) values and their int32 indices, against the reference for many rows, a
// few long rows cut into parts (two launches), odd and even k and a full sort, under method and naive staging; ties
// to the lower index and NaN beyond every number by hand; the output shapes and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_harness.hpp"

using namespace ldmsim;

namespace {

struct TopK {
  std::vector<float> values;
  std::vector<std::int32_t> indices;
};

TopK run_top_k(const Shape& shape, const std::vector<float>& x, const nlohmann::json& attrs, StagingPolicy policy,
               const Arch& arch = test::small_arch()) {
  Machine m{arch};
  const auto op = test::bind_op("top_k", {shape}, attrs);
  std::vector<f16> h(x.size());
  floats_to_halves(x, h);
  const DeviceTensor in = stage_in(m, "x", choose_plan(op->view(0), op->padding(0), policy), h);
  const DeviceTensor values = allocate_tensor(m, "values", tensor_plan(*op, 1, policy));
  const DeviceTensor indices = allocate_tensor(m, "indices", tensor_plan(*op, 2, policy));
  op->run(m, std::vector<DeviceTensor>{in}, std::vector<DeviceTensor>{values, indices}, "top_k");
  TopK out;
  for (const f16 v : stage_out(m, values)) out.values.push_back(static_cast<float>(v));
  const std::vector<f16> units = stage_out(m, indices);
  REQUIRE(units.size() == 2 * op->output_shapes()[1].elements());
  for (std::size_t i = 0; i < units.size(); i += 2) {
    const std::uint32_t word =
        static_cast<std::uint32_t>(units[i].bits) | (static_cast<std::uint32_t>(units[i + 1].bits) << 16);
    out.indices.push_back(static_cast<std::int32_t>(word));
  }
  return out;
}

TopK reference_top_k(const Shape& shape, const std::vector<float>& x, const nlohmann::json& attrs) {
  const auto op = test::bind_op("top_k", {shape}, attrs);
  const auto ref = op->reference(std::vector<HostTensor>{HostTensor{shape, x}});
  TopK out{ref[0].data, {}};
  for (const float v : ref[1].data) out.indices.push_back(static_cast<std::int32_t>(v));
  return out;
}

/// Values held exactly in fp16 (rounded to it) with many ties (small multiples of 1/64) or few (a wide range).
std::vector<float> test_values(std::size_t n, unsigned seed, int spread) {
  std::vector<float> x(n);
  std::uint32_t s = seed;
  for (float& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(
        f16(static_cast<float>(static_cast<int>((s >> 12) % static_cast<unsigned>(spread)) - spread / 2) / 64.0F));
  }
  return x;
}

bool same_values(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("top_k gives the reference's values and indices for short and long rows under method and naive staging",
          "[kernels][top_k]") {
  struct Case {
    Shape shape;
    std::uint64_t k;
  };
  // Many rows (whole rows per core, odd k in pairs of rows); a full sort; rows fewer than cores and longer than a
  // tile (cut into parts, candidates merged); one row of odd length with odd k.
  const std::vector<Case> cases = {{Shape{2, 3, 5, 7}, 3}, {Shape{7, 31}, 7},     {Shape{4, 9, 33}, 33},
                                   {Shape{3, 20000}, 5},   {Shape{1, 50001}, 17}, {Shape{130}, 1},
                                   {Shape{2, 9000}, 600}};
  for (const Case& c : cases) {
    for (const int spread : {9, 60000}) {
      const std::vector<float> x = test_values(c.shape.elements(), 7, spread);
      for (const int largest : {1, 0}) {
        const nlohmann::json attrs = {{"k", c.k}, {"largest", largest}};
        const TopK want = reference_top_k(c.shape, x, attrs);
        for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
          INFO(c.shape.str() << " " << attrs.dump() << " spread " << spread << " " << to_string(p));
          const TopK got = run_top_k(c.shape, x, attrs, p);
          CHECK(got.indices == want.indices);
          CHECK(same_values(got.values, want.values));
        }
      }
    }
  }
}

TEST_CASE("top_k orders ties by index and NaN beyond every number", "[kernels][top_k]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1.0F, nan, 3.0F, 3.0F, -inf, 2.0F, 3.0F, -inf};
  const Shape shape{1, 8};
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    const TopK top = run_top_k(shape, x, {{"k", 4}}, p);
    CHECK(top.indices == std::vector<std::int32_t>{1, 2, 3, 6});
    CHECK(std::isnan(top.values[0]));
    CHECK(std::vector<float>(top.values.begin() + 1, top.values.end()) == std::vector<float>{3.0F, 3.0F, 3.0F});
    const TopK bottom = run_top_k(shape, x, {{"k", 5}, {"largest", 0}}, p);
    CHECK(bottom.indices == std::vector<std::int32_t>{4, 7, 0, 5, 2});
    CHECK(bottom.values == std::vector<float>{-inf, -inf, 1.0F, 2.0F, 3.0F});
    // Every element, smallest first: NaN last.
    const TopK sorted = run_top_k(shape, x, {{"k", 8}, {"largest", 0}}, p);
    CHECK(sorted.indices == std::vector<std::int32_t>{4, 7, 0, 5, 2, 3, 6, 1});
  }
}

TEST_CASE("top_k's output shapes and its errors", "[kernels][top_k]") {
  const auto op = test::bind_op("top_k", {Shape{2, 3, 10}}, {{"k", 4}});
  CHECK(op->output_shapes()[0] == Shape{2, 3, 4});
  CHECK(op->output_shapes()[1] == Shape{2, 3, 4});
  CHECK(op->dtype(1) == DType::kF16);
  CHECK(op->dtype(2) == DType::kI32);
  CHECK_THROWS_WITH(test::bind_op("top_k", {Shape{2, 3}}, {{"k", 4}}),
                    Catch::Contains("k = 4 is more than the last axis' 3 elements"));
  CHECK_THROWS_WITH(test::bind_op("top_k", {Shape{2, 3}}, nullptr), Catch::Contains("needs attribute 'k'"));
  CHECK_THROWS_WITH(test::bind_op("top_k", {Shape{2, 3}}, {{"k", 0}}), Catch::Contains("attrs.k"));
  CHECK_THROWS_WITH(test::bind_op("top_k", {Shape{2, 3}}, {{"k", 1}, {"largest", 2}}), Catch::Contains("largest"));
  CHECK_THROWS_WITH(test::registry().bind("top_k", JsonField(nlohmann::json{{"k", 1}}, "test", "attrs"),
                                          std::vector<Shape>{Shape{4}}, std::vector<DType>{DType::kI32}),
                    Catch::Contains("input 0 is int32, expected f16"));
  // Candidates that cannot fit the local store: refused when the op runs, naming k, the store and the largest k
  // that fits; that k runs (on 64 KiB: 18 bytes a candidate beside 7,952 of buffers).
  const Shape wide{1, 40000};
  const std::vector<float> x = test_values(wide.elements(), 3, 9);
  CHECK_THROWS_WITH(run_top_k(wide, x, {{"k", 30000}}, StagingPolicy::kMethod), Catch::Contains("k = 30000 needs") &&
                                                                                    Catch::Contains("local store") &&
                                                                                    Catch::Contains("(3199 at most)"));
  CHECK_THROWS_WITH(run_top_k(wide, x, {{"k", 3200}}, StagingPolicy::kMethod), Catch::Contains("k = 3200 needs"));
  const TopK most = run_top_k(wide, x, {{"k", 3199}}, StagingPolicy::kMethod);
  CHECK(most.indices == reference_top_k(wide, x, {{"k", 3199}}).indices);
}
