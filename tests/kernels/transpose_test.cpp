// transpose against its reference: the last two axes on odd and even shapes under method and naive staging,
// matrices larger than the local store, the ONNX default perm, every permutation of rank 3 and 4, ranks 5 and 6,
// how each permutation runs and how many requests it issues, and the errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

TEST_CASE("transpose swaps the last two axes exactly", "[kernels][transpose]") {
  for (const Shape& s : {Shape{3, 7}, Shape{2, 3, 5, 7}, Shape{12, 16, 8}, Shape{1, 1}, Shape{5, 1, 9}}) {
    nlohmann::json perm = nlohmann::json::array();
    for (std::size_t d = 0; d + 2 < s.rank(); ++d) perm.push_back(d);
    perm.push_back(s.rank() - 1);
    perm.push_back(s.rank() - 2);
    for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
      INFO(s.str() << " " << to_string(p));
      const auto r = run_op("transpose", {s}, {{"perm", perm}}, p);
      INFO(r.fault);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
    }
  }
  const auto op = test::bind_op("transpose", {Shape{2, 3}});  // ONNX's default perm reverses the axes
  CHECK(op->output_shapes()[0] == Shape{3, 2});
  const auto y = op->reference(std::vector<HostTensor>{HostTensor{Shape{2, 3}, {1, 2, 3, 4, 5, 6}}})[0].data;
  CHECK(y == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("a transpose larger than the local store", "[kernels][transpose]") {
  const auto r = run_op("transpose", {Shape{3, 301, 257}}, {{"perm", {0, 2, 1}}}, StagingPolicy::kMethod, -2.0f, 2.0f,
                        3, {}, Arch::preset("tiny"));
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}

TEST_CASE("transpose's column path (a matrix too tall for two columns) and strided block reads with gaps",
          "[kernels][transpose]") {
  // On tiny (16 KiB ldm) 700 rows leave no room for two columns per read; on small_arch 300 columns are more than
  // one read holds, so k < n and the runs have gaps.
  auto r = run_op("transpose", {Shape{2, 700, 9}}, {{"perm", {0, 2, 1}}}, StagingPolicy::kMethod, -2.0f, 2.0f, 3, {},
                  Arch::preset("tiny"));
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  r = run_op("transpose", {Shape{2, 64, 300}}, {{"perm", {0, 2, 1}}}, StagingPolicy::kMethod);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}

TEST_CASE("transpose of every permutation of rank 3 and 4, odd and even shapes", "[kernels][transpose]") {
  for (const Shape& s : {Shape{3, 5, 7}, Shape{2, 4, 6}, Shape{4, 1, 9}, Shape{2, 3, 5, 7}, Shape{3, 1, 4, 6}}) {
    std::vector<std::size_t> perm(s.rank());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        INFO(s.str() << " perm " << nlohmann::json(perm).dump() << " " << to_string(p));
        const auto r = run_op("transpose", {s}, {{"perm", perm}}, p);
        INFO(r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("transpose of ranks 5 and 6: channel shuffle, NHWC, reversals, negative axes", "[kernels][transpose]") {
  const std::vector<std::pair<Shape, nlohmann::json>> cases = {
      {Shape{1, 2, 3, 5, 7}, {0, 2, 1, 3, 4}},        // ShuffleNet's channel shuffle
      {Shape{2, 3, 2, 5, 3}, {4, 3, 2, 1, 0}},        // every axis moves
      {Shape{2, 3, 1, 2, 5, 3}, {0, 4, 1, 5, 3, 2}},  // rank 6, a size-1 axis
      {Shape{2, 5, 4, 3}, {0, -2, -1, 1}},            // NCHW -> NHWC with negative axes
      {Shape{3, 2, 2, 5}, {1, 0, 2, 3}}};             // a bidirectional RNN's [S, 2, B, H] -> [2, S, B, H]
  for (const auto& [s, perm] : cases) {
    for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
      INFO(s.str() << " perm " << perm.dump() << " " << to_string(p));
      const auto r = run_op("transpose", {s}, {{"perm", perm}}, p);
      INFO(r.fault);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
    }
  }
  const auto op = test::bind_op("transpose", {Shape{2, 5, 4, 3}}, {{"perm", {0, -2, -1, 1}}});
  CHECK(op->output_shapes()[0] == Shape{2, 4, 3, 5});
}

TEST_CASE("a transpose that keeps the last axis reads many runs per request, not one element per request",
          "[kernels][transpose]") {
  // Attention's head split [1, S, H, D] -> [1, H, S, D]: runs of D elements.
  const Shape s{1, 96, 12, 64};
  const auto r = run_op("transpose", {s}, {{"perm", {0, 2, 1, 3}}}, StagingPolicy::kMethod, -2.0f, 2.0f, 7, {},
                        Arch::preset("sw26010pro"));
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.metrics["transpose"] == "view");
  // Every output tile is one strided get and one put: far fewer requests than runs of 64 elements.
  const std::uint64_t runs = s.elements() / 64;
  CHECK(r.dma_requests * 8 <= runs);
}

TEST_CASE("transpose plans: a view, a swap, or a swap then a view", "[kernels][transpose]") {
  const auto plan = [](const Shape& s, const nlohmann::json& perm) {
    const auto r = run_op("transpose", {s}, {{"perm", perm}}, StagingPolicy::kMethod);
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
    return r.metrics["transpose"].get<std::string>();
  };
  CHECK(plan(Shape{2, 3, 5, 7}, {0, 2, 1, 3}) == "view");
  CHECK(plan(Shape{2, 3, 5, 7}, {0, 2, 3, 1}) == "swap");            // NCHW -> NHWC: [C, HW] swapped
  CHECK(plan(Shape{2, 3, 5, 7}, {0, 3, 1, 2}) == "swap");            // NHWC -> NCHW
  CHECK(plan(Shape{2, 3, 5, 7}, {3, 2, 1, 0}) == "swap-then-view");  // a reversal
  CHECK(plan(Shape{2, 3, 5, 7}, {0, 1, 2, 3}) == "view");            // identity: a copy
}

TEST_CASE("transpose errors name the op and what is wrong", "[kernels][transpose]") {
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{2, 3}}, {{"perm", {1}}}), Catch::Contains("perm has 1 entries"));
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{2, 3, 4}}, {{"perm", {0, 0, 1}}}),
                    Catch::Contains("perm names axis 0 twice"));
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{2, 3, 4}}, {{"perm", {0, 3, 1}}}), Catch::Contains("perm"));
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{}}), Catch::Contains("rank >= 1"));
}
