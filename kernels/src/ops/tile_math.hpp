// Private: the host arithmetic of ldm tiles that dominates a simulated matrix multiply or convolution. Its own
// file so it can be compiled for speed (-O3, one clone per x86-64 level chosen at load time) without changing a
// result: no fused multiply-adds (-ffp-contract=off), and every output element sums its products in k order
// in every clone, so results are bit-identical on every host.
#pragma once

#include <cstddef>

namespace ldmsim::ops {

/// acc[rows, cols] += a[rows, depth] b[depth, cols]; acc rows `acc_pitch` apart.
void multiply_add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols, std::size_t depth,
                  std::size_t acc_pitch);

/// acc[r * acc_pitch + c] += dot(a[r, :], v[c, :]) over `depth`, for a few vectors (a matrix-vector product, where
/// multiply_add's column blocks would mostly be padding). Each dot sums 16 interleaved partial sums, then halves
/// them pairwise: a fixed order, so the bits are the same on every host.
void multiply_add_dots(const float* a, const float* v, float* acc, std::size_t rows, std::size_t vectors,
                       std::size_t depth, std::size_t acc_pitch);

}  // namespace ldmsim::ops
