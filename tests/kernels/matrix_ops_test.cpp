// 2-D and 3-D class operators (softmax, fc, pools, spatialbn inference and training) on even and odd shapes
// under all three staging policies: method and naive match the reference, none traps exactly when a tensor
// needs padding and then says so.
#include <catch2/catch.hpp>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

namespace {

struct Case {
  std::string op;
  std::vector<Shape4> shapes;
  nlohmann::json attrs;
  float lo = -2.0f, hi = 2.0f;
};

std::vector<Case> cases_for(const Shape4& s) {
  const Shape4 c1 = Shape4::from_dims({s.c});
  std::vector<Case> out;
  out.push_back({"softmax", {s}, {}});
  out.push_back({"fc", {s, Shape4::from_dims({3, s.chw()}), Shape4::from_dims({3})}, {}});
  out.push_back({"fc", {s, Shape4::from_dims({4, s.chw()})}, {}});
  out.push_back({"max_pool", {s}, {{"kernel", 2}, {"stride", 1}}});
  out.push_back({"avg_pool", {s}, {{"kernel", 3}, {"stride", 2}, {"pad", 1}}});
  out.push_back({"avg_pool", {s}, {{"kernel", 2}, {"stride", 2}, {"pad", 1}, {"count_include_pad", true}}});
  out.push_back({"spatialbn", {s, c1, c1, c1, c1}, {{"epsilon", 1e-3}}});
  out.push_back({"spatialbn_train", {s, c1, c1}, {}});
  return out;
}

}  // namespace

TEST_CASE("matrix operators on even and odd shapes under every staging policy", "[kernels][2d]") {
  int trapped = 0, clean = 0;
  for (const Shape4& s : test::test_shapes()) {
    for (const Case& c : cases_for(s)) {
      if ((c.op == "max_pool" && (s.h < 2 || s.w < 2))) continue;
      INFO(c.op << " " << s.str() << " " << c.attrs.dump());
      std::vector<std::vector<float>> fixed;
      if (c.op == "spatialbn") {  // var must be positive
        fixed = {{}, {}, {}, {}, std::vector<float>(s.c, 0.5f)};
      }
      for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        const auto r = run_op(c.op, c.shapes, c.attrs, p, -2.0f, 2.0f, 11, fixed);
        INFO(to_string(p) << ": " << r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
      const auto r = run_op(c.op, c.shapes, c.attrs, StagingPolicy::kNone, -2.0f, 2.0f, 11, fixed);
      INFO("none: " << r.fault);
      CHECK(r.trapped == r.any_padding);
      (r.trapped ? trapped : clean) += 1;
      if (r.trapped) {
        CHECK_THAT(r.fault, Catch::Contains("pad this tensor at staging"));
      } else {
        CHECK(r.max_excess <= 0);
      }
    }
  }
  CHECK(trapped > 10);
  CHECK(clean > 10);
}

TEST_CASE("bad attributes and shapes are rejected by shape inference", "[kernels][2d]") {
  const Operator& pool = test::op_named("max_pool");
  CHECK_THROWS_WITH(pool.infer({Shape4{1, 1, 4, 4}}, {{"kernel", 0}}), Catch::Contains("'kernel'"));
  CHECK_THROWS_WITH(pool.infer({Shape4{1, 1, 4, 4}}, {{"size", 2}}), Catch::Contains("unknown attribute 'size'"));
  const Operator& fc = test::op_named("fc");
  CHECK_THROWS_WITH(fc.infer({Shape4{2, 3, 1, 1}, Shape4::from_dims({4, 5})}, {}), Catch::Contains("c*h*w"));
  CHECK_THROWS_WITH(test::op_named("softmax").infer({Shape4{2, 3, 1, 1}}, {{"axis", 2}}), Catch::Contains("axis"));
}
