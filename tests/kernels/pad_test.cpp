// pad against its reference: constant, reflect and edge modes on every axis, odd shapes under method and naive
// staging, rows longer than the local store, and the errors.
#include <catch2/catch.hpp>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

TEST_CASE("pad in constant, reflect and edge modes matches the reference", "[kernels][pad]") {
  for (const char* mode : {"constant", "reflect", "edge"}) {
    for (const auto& [shape, pads] : std::vector<std::pair<Shape, nlohmann::json>>{
             {Shape{2, 3, 5, 7}, {0, 0, 1, 2, 0, 0, 2, 1}},  // DenseNet-style spatial pads
             {Shape{3, 5, 7}, {1, 2, 0, 1, 0, 3}},           // every axis, some only on one side
             {Shape{9}, {3, 4}},
             {Shape{2, 4, 4}, {0, 0, 0, 0, 0, 0}}}) {
      for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        INFO(mode << " " << shape.str() << " " << pads.dump() << " " << to_string(p));
        const auto r = run_op("pad", {shape}, {{"pads", pads}, {"mode", mode}, {"value", 0.5}}, p);
        INFO(r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
    }
  }
  // Rows longer than the local store (tiny: 16 KiB) take the run-by-run path.
  for (const char* mode : {"constant", "reflect", "edge"}) {
    INFO(mode);
    const auto r = run_op("pad", {Shape{3, 9001}}, {{"pads", {1, 5, 0, 7}}, {"mode", mode}}, StagingPolicy::kMethod,
                          -2.0f, 2.0f, 7, {}, Arch::preset("tiny"));
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
  const auto op = test::bind_op("pad", {Shape{4}}, {{"pads", {2, 1}}, {"mode", "reflect"}});
  CHECK(op->output_shapes()[0] == Shape{7});
  CHECK(op->reference(std::vector<HostTensor>{HostTensor{Shape{4}, {1, 2, 3, 4}}})[0].data ==
        std::vector<float>{3, 2, 1, 2, 3, 4, 3});
  const auto edge = test::bind_op("pad", {Shape{3}}, {{"pads", {2, 1}}, {"mode", "edge"}});
  CHECK(edge->reference(std::vector<HostTensor>{HostTensor{Shape{3}, {1, 2, 3}}})[0].data ==
        std::vector<float>{1, 1, 1, 2, 3, 3});
}

TEST_CASE("pad errors name the op and the attribute", "[kernels][pad]") {
  CHECK_THROWS_WITH(test::bind_op("pad", {Shape{4, 5}}, {{"pads", {1, 1}}}), Catch::Contains("needs 4"));
  CHECK_THROWS_WITH(test::bind_op("pad", {Shape{4, 5}}, {{"pads", {0, 5, 0, 0}}, {"mode", "reflect"}}),
                    Catch::Contains("must be smaller than its size 5"));
  CHECK_THROWS_WITH(test::bind_op("pad", {Shape{4}}, {{"pads", {1, 1}}, {"mode", "wrap"}}),
                    Catch::Contains("\"constant\", \"reflect\" or \"edge\""));
  CHECK_THROWS(test::bind_op("pad", {Shape{4}}, {{"pads", {-1, 1}}}));
  CHECK_THROWS_WITH(test::bind_op("pad", {Shape{4}}, {{"pads", {1, 1}}, {"value", 1e6}}),
                    Catch::Contains("not a finite fp16"));
}
