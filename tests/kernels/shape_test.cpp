// Shapes of rank 0 to 6, checked element counts, and numpy broadcasting.
#include "ldmsim/kernels/shape.hpp"

#include <catch2/catch.hpp>

#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;

TEST_CASE("shapes have rank 0 to 6, positive dims and a checked element count", "[shape]") {
  const Shape scalar;
  CHECK(scalar.rank() == 0);
  CHECK(scalar.elements() == 1);
  CHECK(scalar.str() == "[]");
  const Shape six{2, 1, 3, 1, 5, 7};
  CHECK(six.rank() == 6);
  CHECK(six.elements() == 210);
  CHECK(six.product(2, 5) == 15);
  const std::vector<std::uint64_t> seven(7, 2);
  CHECK_THROWS_WITH(Shape(seven, "tensor 'x'"), Catch::Contains("tensor 'x'") && Catch::Contains("rank 7"));
  CHECK_THROWS_WITH(Shape({4, 0, 2}), Catch::Contains("dimension 1 is 0"));
  // [2^32, 2^32] would wrap a 64-bit count to 0 after one more factor; it is refused outright.
  CHECK_THROWS_WITH(Shape({std::uint64_t{1} << 32, std::uint64_t{1} << 32}), Catch::Contains("larger than 2^48"));
  CHECK_THROWS_AS(Shape({100000, 100000, 100000, 100000}), ConfigError);
  CHECK_THROWS_AS(checked_mul(std::uint64_t{1} << 40, std::uint64_t{1} << 20, "x"), ConfigError);
  CHECK(checked_add(5, 7, "x") == 12);
}

TEST_CASE("broadcasting follows numpy's rules for every rank", "[shape]") {
  CHECK(broadcast_shapes(Shape{2, 3, 5, 7}, Shape{7}) == Shape{2, 3, 5, 7});
  CHECK(broadcast_shapes(Shape{2, 3, 5, 7}, Shape{3, 1, 1}) == Shape{2, 3, 5, 7});
  CHECK(broadcast_shapes(Shape{2, 3, 5, 7}, Shape{}) == Shape{2, 3, 5, 7});
  CHECK(broadcast_shapes(Shape{}, Shape{}) == Shape{});
  CHECK(broadcast_shapes(Shape{4, 1}, Shape{3}) == Shape{4, 3});
  CHECK(broadcast_shapes(Shape{1, 6, 1, 4, 1, 2}, Shape{5, 1, 3, 1}) == Shape{1, 6, 5, 4, 3, 2});
  CHECK_THROWS_WITH(broadcast_shapes(Shape{2, 3}, Shape{4}), Catch::Contains("[2, 3]") && Catch::Contains("[4]"));
  CHECK_THROWS_AS(broadcast_shapes(Shape{2, 3, 5}, Shape{2, 1}), ConfigError);
  // Strides read a [3, 1, 1] channel vector as a [2, 3, 5, 7] tensor: 0 on the broadcast axes.
  const auto s = broadcast_strides(Shape{3, 1, 1}, Shape{2, 3, 5, 7});
  CHECK(s[0] == 0);
  CHECK(s[1] == 1);
  CHECK(s[2] == 0);
  CHECK(s[3] == 0);
  const auto scalar = broadcast_strides(Shape{}, Shape{2, 3});
  CHECK(scalar[0] == 0);
  CHECK(scalar[1] == 0);
}

TEST_CASE("the NCHW view of every rank", "[shape]") {
  CHECK(Shape4::view_of(Shape{}).elements() == 1);
  CHECK(Shape4::view_of(Shape{5}).n == 5);
  const Shape4 v6 = Shape4::view_of(Shape{2, 3, 4, 5, 6, 7});
  CHECK(v6.elements() == 2 * 3 * 4 * 5 * 6 * 7);
  CHECK(v6.w == 7);
  CHECK(v6.h == 6);
  const Shape4 m = Shape4::matrix_view(Shape{2, 3, 5, 7}, 2);
  CHECK(m.n == 6);
  CHECK(m.c == 35);
}
