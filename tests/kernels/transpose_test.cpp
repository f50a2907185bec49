// transpose of the last two axes against its reference on odd and even shapes under method and naive staging,
// matrices larger than the local store, the ONNX default perm, and the errors.
#include <catch2/catch.hpp>
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

TEST_CASE("transpose errors name the op and what it supports", "[kernels][transpose]") {
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{2, 3, 4}}), Catch::Contains("only the last two axes"));
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{2, 3, 4}}, {{"perm", {1, 0, 2}}}),
                    Catch::Contains("only the last two axes"));
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{2, 3}}, {{"perm", {0, 1}}}),
                    Catch::Contains("must swap the last two axes"));
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{2, 3}}, {{"perm", {1}}}), Catch::Contains("perm has 1 entries"));
  CHECK_THROWS_WITH(test::bind_op("transpose", {Shape{5}}), Catch::Contains("rank >= 2"));
}
