// multiply_add, the host arithmetic of every matmul and conv tile: its register blocks and column tails must give
// the same bits as the plain loop (each output element sums its products one at a time, in k order), for every
// shape the blocking can produce, so a result never depends on the host or the block sizes.
#include "../../kernels/src/ops/tile_math.hpp"  // white box: the kernel's remainders

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

namespace {

void plain_multiply_add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                        std::size_t depth, std::size_t acc_pitch) {
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      float sum = acc[i * acc_pitch + j];
      for (std::size_t t = 0; t < depth; ++t) {
        const volatile float product = a[i * depth + t] * b[t * cols + j];  // no fused multiply-add here either
        sum += product;
      }
      acc[i * acc_pitch + j] = sum;
    }
  }
}

std::vector<float> random_floats(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-2.0F, 2.0F);
  std::vector<float> v(count);
  for (float& x : v) x = value(rng);
  return v;
}

}  // namespace

TEST_CASE("multiply_add is bit-identical to the in-order plain loop on every remainder shape") {
  std::mt19937 rng(7);
  std::size_t shapes = 0, differing = 0;
  for (const std::size_t rows : {1U, 2U, 3U, 4U, 5U, 6U, 7U, 8U, 12U}) {
    for (const std::size_t cols : {1U, 2U, 15U, 31U, 32U, 33U, 63U, 64U, 65U, 97U, 128U, 130U, 256U}) {
      for (const std::size_t depth : {1U, 3U, 64U, 257U}) {
        const std::size_t pitch = cols + 3;  // rows of acc further apart than the tile's width
        const auto a = random_floats(rows * depth, rng), b = random_floats(depth * cols, rng);
        const auto start = random_floats(rows * pitch, rng);
        auto fast = start, plain = start;
        ldmsim::ops::multiply_add(a.data(), b.data(), fast.data(), rows, cols, depth, pitch);
        plain_multiply_add(a.data(), b.data(), plain.data(), rows, cols, depth, pitch);
        ++shapes;
        if (std::memcmp(fast.data(), plain.data(), fast.size() * sizeof(float)) != 0) {
          ++differing;
          UNSCOPED_INFO("rows " << rows << " cols " << cols << " depth " << depth);
        }
      }
    }
  }
  CHECK(shapes == 9 * 13 * 4);
  CHECK(differing == 0);
}
