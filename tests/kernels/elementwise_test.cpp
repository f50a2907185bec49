// 1-D class operators (relu, sigmoid, tanh, add, mul) under all three staging policies.
#include <catch2/catch.hpp>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

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
  const Shape4 s{1, 1, 1, 40001};
  s.rank == 4 ? void() : void();
  const auto r = run_op("sigmoid", {Shape4::from_dims({40001})}, {}, StagingPolicy::kMethod);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}
