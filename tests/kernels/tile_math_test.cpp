// multiply_add, the host arithmetic of every matmul and conv tile: its register blocks, packed panels and column
// tails must give the same bits as the plain loop (each output element sums its products one at a time, in k
// order), for every shape the blocking can produce and for B rows packed or padded (b_pitch_for), so a result
// never depends on the host, the block sizes or the tile's pitch. Its operands are fp16 values, whose products are
// exact in fp32: the fused multiply-adds of the AVX paths then give the bits of a multiply and an add, checked on
// fp16 values of every exponent, subnormals included. On an AVX-512 host one and two rows take 128-column blocks
// first (200 and 352 columns: such blocks, then 64- and 32-column ones and a tail); multiply_add_portable, the path
// of every other host, and multiply_add_unfused, that of a host without FMA, are checked on the same shapes.
#include "../../kernels/src/ops/tile_math.hpp"  // white box: the kernel's remainders

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../kernels/src/ops/tile_floats.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace {

void plain_multiply_add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                        std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch) {
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      float sum = acc[i * acc_pitch + j];
      for (std::size_t t = 0; t < depth; ++t) {
        const volatile float product = a[i * depth + t] * b[t * b_pitch + j];  // no fused multiply-add here either
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

/// fp16 values as floats, every finite exponent equally likely (subnormals and 65504's binade included).
std::vector<float> random_halves(std::size_t count, std::mt19937& rng) {
  std::uniform_int_distribution<unsigned> sign(0, 1), exponent(0, 30), fraction(0, 1023);
  std::vector<float> v(count);
  for (float& x : v) {
    ldmsim::f16 h;
    h.bits = static_cast<std::uint16_t>(sign(rng) << 15 | exponent(rng) << 10 | fraction(rng));
    x = static_cast<float>(h);
  }
  return v;
}

}  // namespace

TEST_CASE("multiply_add is bit-identical to the in-order plain loop on every remainder shape") {
  std::mt19937 rng(7);
  std::size_t shapes = 0, differing = 0;
  for (const std::size_t rows : {1U, 2U, 3U, 4U, 5U, 6U, 7U, 8U, 9U, 10U, 11U, 12U, 13U, 15U}) {
    for (const std::size_t cols : {1U,  2U,  5U,  6U,  8U,  9U,  15U, 16U,  17U,  31U,  32U,  33U,  38U,
                                   41U, 49U, 50U, 63U, 64U, 65U, 97U, 128U, 130U, 132U, 200U, 256U, 352U}) {
      for (const std::size_t depth : {1U, 3U, 64U, 257U}) {
        // B packed (the last block from a zero-padded copy) and padded to multiply_add's pitch (read in place; the
        // padding holds large values, which must not reach any output).
        for (const std::size_t b_pitch : {cols, ldmsim::ops::b_pitch_for(cols)}) {
          const std::size_t pitch = cols + 3;  // rows of acc further apart than the tile's width
          const auto a = random_halves(rows * depth, rng);
          auto b = random_halves(depth * b_pitch, rng);
          for (std::size_t t = 0; t < depth; ++t) std::fill_n(b.data() + t * b_pitch + cols, b_pitch - cols, 1e30F);
          const auto start = random_floats(rows * pitch, rng);
          auto fast = start, portable = start, unfused = start, plain = start;
          ldmsim::ops::multiply_add(a.data(), b.data(), fast.data(), rows, cols, depth, pitch, b_pitch);
          ldmsim::ops::multiply_add_portable(a.data(), b.data(), portable.data(), rows, cols, depth, pitch, b_pitch);
          ldmsim::ops::multiply_add_unfused(a.data(), b.data(), unfused.data(), rows, cols, depth, pitch, b_pitch);
          plain_multiply_add(a.data(), b.data(), plain.data(), rows, cols, depth, pitch, b_pitch);
          ++shapes;
          const auto same = [&plain](const std::vector<float>& got) {
            return std::memcmp(got.data(), plain.data(), got.size() * sizeof(float)) == 0;
          };
          if (!same(fast) || !same(portable) || !same(unfused)) {
            ++differing;
            UNSCOPED_INFO("rows " << rows << " cols " << cols << " depth " << depth << " b_pitch " << b_pitch);
          }
        }
      }
    }
  }
  CHECK(shapes == 14 * 26 * 4 * 2);
  CHECK(differing == 0);
}

TEST_CASE("multiply_add gives the default NaN for every NaN result on every path") {
  // Which of two NaNs a sum keeps depends on the instruction (fused or not) and the compiler's operand order; the
  // kernel settles every NaN result to the default NaN, so the bits are the same on every host. The first case is
  // a -NaN accumulator meeting a +NaN of B's (a fused multiply-add keeps B's, an add the accumulator's).
  constexpr std::uint32_t kDefaultNan = 0xffc00000U;
  const float inf = std::numeric_limits<float>::infinity();
  const float b_nan = std::bit_cast<float>(0x7fc0a000U), acc_nan = std::bit_cast<float>(kDefaultNan);
  std::mt19937 rng(3);
  std::size_t nan_results = 0;
  for (const std::size_t rows : {1U, 2U, 4U, 9U}) {
    for (const std::size_t cols : {8U, 16U, 20U, 32U, 50U, 64U, 100U, 200U}) {
      for (const std::size_t depth : {1U, 5U, 64U}) {
        const std::size_t pitch = ldmsim::ops::b_pitch_for(cols);
        auto a = random_halves(rows * depth, rng);
        auto b = random_halves(depth * pitch, rng);
        auto start = random_halves(rows * cols, rng);
        a[0] = 1.0F;
        b[0] = b_nan;  // row 0 of the output meets B's NaN in column 0
        start[0] = acc_nan;
        if (cols > 3) start[3] = std::bit_cast<float>(0x7fc00001U);  // another payload in the accumulator
        b[cols - 1] = std::bit_cast<float>(0xffc0b000U);             // and a -NaN of B's in the last (tail) column
        if (depth > 1 && cols > 5) {                                 // inf x 0 and inf - inf in column 5
          b[5] = inf;
          b[pitch + 5] = -inf;
          a[1] = 0.0F;
        }
        for (std::size_t t = 0; t < depth; ++t) {
          std::fill(b.data() + t * pitch + cols, b.data() + (t + 1) * pitch, 0.0F);
        }
        auto fast = start, portable = start, unfused = start, plain = start;
        ldmsim::ops::multiply_add(a.data(), b.data(), fast.data(), rows, cols, depth, cols, pitch);
        ldmsim::ops::multiply_add_portable(a.data(), b.data(), portable.data(), rows, cols, depth, cols, pitch);
        ldmsim::ops::multiply_add_unfused(a.data(), b.data(), unfused.data(), rows, cols, depth, cols, pitch);
        plain_multiply_add(a.data(), b.data(), plain.data(), rows, cols, depth, cols, pitch);
        INFO("rows " << rows << " cols " << cols << " depth " << depth);
        CHECK(std::memcmp(fast.data(), portable.data(), fast.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(fast.data(), unfused.data(), fast.size() * sizeof(float)) == 0);
        for (std::size_t i = 0; i < plain.size(); ++i) {
          if (std::isnan(plain[i])) {
            ++nan_results;
            CHECK(std::bit_cast<std::uint32_t>(fast[i]) == kDefaultNan);
          } else {
            CHECK(std::bit_cast<std::uint32_t>(fast[i]) == std::bit_cast<std::uint32_t>(plain[i]));
          }
        }
      }
    }
  }
  CHECK(nan_results > 100);
}

TEST_CASE("b_pitch_for pads B rows to whole 32-column blocks and a last block of 8, 16 or 32 columns") {
  using ldmsim::ops::b_pitch_for;
  CHECK(b_pitch_for(1) == 8);
  CHECK(b_pitch_for(8) == 8);
  CHECK(b_pitch_for(9) == 16);
  CHECK(b_pitch_for(16) == 16);
  CHECK(b_pitch_for(17) == 32);
  CHECK(b_pitch_for(32) == 32);
  CHECK(b_pitch_for(37) == 40);
  CHECK(b_pitch_for(49) == 64);
  CHECK(b_pitch_for(256) == 256);
  CHECK(b_pitch_for(132) == 136);
  CHECK(b_pitch_for(66) == 72);
}

TEST_CASE("multiply_add_dots sums each dot in its fixed lane order, bit for bit") {
  // The order the kernel promises: 16 interleaved partial sums over k, then halved pairwise.
  const auto in_order = [](const float* x, const float* y, std::size_t n) {
    float lanes[16] = {};
    for (std::size_t k = 0; k < n; ++k) {
      const volatile float product = x[k] * y[k];
      lanes[k % 16] += product;
    }
    for (std::size_t width = 8; width > 0; width /= 2) {
      for (std::size_t j = 0; j < width; ++j) lanes[j] += lanes[j + width];
    }
    return lanes[0];
  };
  std::mt19937 rng(11);
  for (const std::size_t rows : {1U, 3U, 8U}) {
    for (const std::size_t vectors : {1U, 2U, 5U}) {
      for (const std::size_t depth : {1U, 15U, 16U, 17U, 100U, 1030U}) {
        const auto a = random_floats(rows * depth, rng), v = random_floats(vectors * depth, rng);
        std::vector<float> acc = random_floats(rows * (vectors + 1), rng), want = acc;
        ldmsim::ops::multiply_add_dots(a.data(), v.data(), acc.data(), rows, vectors, depth, vectors + 1);
        for (std::size_t r = 0; r < rows; ++r) {
          for (std::size_t c = 0; c < vectors; ++c) {
            want[r * (vectors + 1) + c] += in_order(a.data() + r * depth, v.data() + c * depth, depth);
          }
        }
        INFO(rows << " x " << vectors << " x " << depth);
        CHECK(std::memcmp(acc.data(), want.data(), acc.size() * sizeof(float)) == 0);
      }
    }
  }
  // A NaN result is the default NaN, whichever NaNs met (here the accumulator's and one of x's).
  std::vector<float> x(17, 1.0F), y(17, 1.0F), acc{std::bit_cast<float>(0x7fc00001U)};
  x[3] = std::bit_cast<float>(0x7fc0b000U);
  ldmsim::ops::multiply_add_dots(x.data(), y.data(), acc.data(), 1, 1, x.size(), 1);
  CHECK(std::bit_cast<std::uint32_t>(acc[0]) == 0xffc00000U);
}

TEST_CASE("TileFloats start on a 64-byte line whatever their size") {
  for (const std::size_t n : {1U, 3U, 17U, 1000U, 100000U}) {
    const ldmsim::ops::TileFloats tile(n, 0.0F);
    CHECK(reinterpret_cast<std::uintptr_t>(tile.data()) % 64 == 0);
  }
}
