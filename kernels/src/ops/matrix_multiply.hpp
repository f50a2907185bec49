// Private: the tiled matrix multiply engine behind matmul and gemm (and the GEMM step of conv's im2col):
// Y[b] = alpha * op(A[b]) op(B[b]) + beta * C, over a batch of output matrices whose A and B may be broadcast.
// Output rows of all batches form one [rows, n] matrix cut into blocks (whole rows in pairs when its pitch is
// odd, so each block is one even range); blocks are dealt round-robin to every core of every group. A block
// streams k in chunks: the next chunk's A and B tiles are read (get_block) while this one is multiplied, and the
// multiply is charged as the register-blocked micro-kernel the compute model describes.
#pragma once

#include <cstddef>
#include <vector>

#include "op_support.hpp"

namespace ldmsim::ops {

/// One stored operand: a row-major [batches * rows, cols] matrix view of a device tensor (pitch = layout's
/// chw_pitch). The logical operand is the stored matrix, or its transpose when `transposed`.
struct StoredMatrix {
  DevicePtr<const f16> base;
  Layout layout;
  std::size_t rows = 0, cols = 0;  ///< of one stored matrix
  bool transposed = false;
};

/// The addend of gemm: a [rows, cols] matrix broadcast to [m, n] (rows 1 or m, cols 1 or n).
struct Addend {
  StoredMatrix matrix;
  float beta = 1.0f;
};

struct MatrixMultiply {
  StoredMatrix a, b;
  std::vector<std::size_t> a_batch, b_batch;  ///< stored matrix index of A and B for each output batch
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  bool has_addend = false;
  Addend c;
  DevicePtr<f16> y;
  Layout yl;  ///< [batches * m, n]
};

/// The kernel (every core of every group runs it).
void matrix_multiply_kernel(Core& core, const MatrixMultiply& job);

/// Stored matrix index of input `input_batch` (shape of its leading dims) for each batch of `output_batch`
/// (numpy broadcasting).
std::vector<std::size_t> broadcast_batches(const Shape& input_batch, const Shape& output_batch);

}  // namespace ldmsim::ops
