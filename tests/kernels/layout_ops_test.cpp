// reshape, flatten, concat and global_avg_pool against their references, every staging policy, and errors.
#include <catch2/catch.hpp>

#include "op_harness.hpp"

using namespace ldmsim;
using test::bind_op;
using test::run_op;

namespace {
void check_all_policies(const std::string& name, const std::vector<Shape>& shapes, const nlohmann::json& attrs) {
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    const auto r = run_op(name, shapes, attrs, p);
    INFO(name << " " << attrs.dump() << " " << to_string(p) << ": " << r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
}
}  // namespace

TEST_CASE("reshape and flatten keep the elements in C order", "[kernels][layout]") {
  CHECK(bind_op("reshape", {Shape{2, 3, 5, 7}}, {{"shape", {6, -1}}})->output_shapes()[0] == Shape{6, 35});
  CHECK(bind_op("reshape", {Shape{2, 3, 5, 7}}, {{"shape", {0, 0, 35}}})->output_shapes()[0] == Shape{2, 3, 35});
  CHECK(bind_op("reshape", {Shape{1, 1}}, {{"shape", nlohmann::json::array()}})->output_shapes()[0] == Shape{});
  CHECK(bind_op("flatten", {Shape{2, 3, 5, 7}})->output_shapes()[0] == Shape{2, 105});
  CHECK(bind_op("flatten", {Shape{2, 3, 5, 7}}, {{"axis", 0}})->output_shapes()[0] == Shape{1, 210});
  CHECK(bind_op("flatten", {Shape{2, 3, 5, 7}}, {{"axis", 4}})->output_shapes()[0] == Shape{210, 1});
  check_all_policies("reshape", {Shape{3, 5, 7}}, {{"shape", {7, 15}}});
  check_all_policies("flatten", {Shape{3, 5, 7, 1}}, {{"axis", 2}});
  CHECK_THROWS_WITH(bind_op("reshape", {Shape{2, 3}}, {{"shape", {4, 2}}}),
                    Catch::Contains("reshape") && Catch::Contains("8 elements"));
  CHECK_THROWS_WITH(bind_op("reshape", {Shape{2, 3}}, {{"shape", {-1, -1}}}), Catch::Contains("second -1"));
  CHECK_THROWS_WITH(bind_op("reshape", {Shape{2, 3}}, {{"shape", {-1, 4}}}), Catch::Contains("cannot infer"));
  CHECK_THROWS_WITH(bind_op("reshape", {Shape{2, 3}}), Catch::Contains("needs a 'shape'"));
}

TEST_CASE("concat joins along any axis, odd sizes included", "[kernels][layout]") {
  CHECK(bind_op("concat", {Shape{2, 3, 5, 7}, Shape{2, 4, 5, 7}})->output_shapes()[0] == Shape{2, 7, 5, 7});
  check_all_policies("concat", {Shape{2, 3, 5, 7}, Shape{2, 4, 5, 7}, Shape{2, 1, 5, 7}}, nullptr);
  check_all_policies("concat", {Shape{3, 5, 7}, Shape{3, 5, 2}}, {{"axis", -1}});
  check_all_policies("concat", {Shape{3, 5}, Shape{4, 5}}, {{"axis", 0}});
  check_all_policies("concat", {Shape{1, 1, 1, 1}}, nullptr);
  CHECK_THROWS_WITH(bind_op("concat", {Shape{2, 3, 5}, Shape{2, 3, 4}}),
                    Catch::Contains("concat: input 1 [2, 3, 4] does not match input 0 [2, 3, 5] outside axis 1"));
  CHECK_THROWS_WITH(bind_op("concat", {Shape{2, 3}}, {{"axis", 2}}), Catch::Contains("axis"));
}

TEST_CASE("global_avg_pool averages each plane, planes larger than ldm included", "[kernels][layout]") {
  CHECK(bind_op("global_avg_pool", {Shape{2, 3, 5, 7}})->output_shapes()[0] == Shape{2, 3, 1, 1});
  for (const Shape4& s : test::test_shapes()) check_all_policies("global_avg_pool", {test::shape_of(s)}, nullptr);
  // A 300x300 plane is 176 KiB of fp16, beyond sw26010's 64 KiB ldm.
  const auto r = run_op("global_avg_pool", {Shape{1, 3, 300, 300}}, nullptr, StagingPolicy::kMethod, -2.0f, 2.0f, 7, {},
                        Arch::preset("sw26010"));
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK_THROWS_WITH(bind_op("global_avg_pool", {Shape{4, 5}}), Catch::Contains("rank >= 3"));
}
