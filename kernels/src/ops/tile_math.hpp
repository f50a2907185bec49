// Private: the host arithmetic of ldm tiles that dominates a simulated matrix multiply or convolution. Its own
// file so it can be compiled for speed (-O3; multiply_add's AVX-512 and AVX2 paths chosen at its first call)
// without changing a result: every output element sums its products in k order on every path, and the compiler
// fuses nothing (-ffp-contract=off). The operands are fp16 values held as floats (tiles unpacked from ldm), so
// every product is exact in fp32: a fused multiply-add, which the AVX paths use where they write one, rounds
// exactly as the add after the multiply, and results are bit-identical on every host.
#pragma once

#include <cstddef>

namespace ldmsim::ops {

/// The row pitch of a B operand with `cols` columns that multiply_add reads in place: `cols` rounded up to whole
/// 32-column blocks and a last block of 8, 16 or 32 columns (the padding columns only feed products that are
/// thrown away; tile builders keep them zero).
std::size_t b_pitch_for(std::size_t cols);
/// Zeros the padding columns [cols, pitch) of `rows` rows `pitch` floats apart (a B tile's, b_pitch_for).
void zero_padding(float* tile, std::size_t rows, std::size_t cols, std::size_t pitch);

/// acc[rows, cols] += a[rows, depth] b[depth, cols]; acc rows `acc_pitch` apart, b rows `b_pitch` (>= cols) apart.
/// Every element of a and of b's first `cols` columns must be an fp16 value (exact products, above). Every NaN
/// among acc's results comes out as the default NaN 0xffc00000: which of two NaNs a sum keeps depends on the
/// instructions, so a NaN's sign and payload are not kept.
/// With b_pitch_for(cols) the last column block reads b in place, up to b_pitch columns of every row, the last row
/// included (b must hold depth * b_pitch floats); a narrower pitch costs a zero-padded copy of b's last columns per
/// call.
void multiply_add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols, std::size_t depth,
                  std::size_t acc_pitch, std::size_t b_pitch);

/// multiply_add without the AVX-512 blocks (fused on a host with AVX2 and FMA, else multiply_add_unfused): the path
/// of every other host, so that an AVX-512 host's tests check it too.
void multiply_add_portable(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                           std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch);

/// multiply_add with a separate multiply and add for every product: the path of a host without FMA.
void multiply_add_unfused(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                          std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch);

/// acc[r * acc_pitch + c] += dot(a[r, :], v[c, :]) over `depth`, for a few vectors (a matrix-vector product, where
/// multiply_add's column blocks would mostly be padding). Each dot sums 16 interleaved partial sums, then halves
/// them pairwise: a fixed order, so the bits are the same on every host (a NaN result is the default NaN, as above).
void multiply_add_dots(const float* a, const float* v, float* acc, std::size_t rows, std::size_t vectors,
                       std::size_t depth, std::size_t acc_pitch);

}  // namespace ldmsim::ops
