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

}  // namespace ldmsim::ops
