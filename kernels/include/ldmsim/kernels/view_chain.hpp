// Chains of ops that only rearrange elements (slice, expand, reshape, flatten, a transpose that keeps the last
// axis last), composed into one strided copy, and such a chain ending in a transpose that swaps rows and columns,
// composed into that swap reading in place: a transformer's q/k/v split (slice, reshape, transpose) copies each
// element once instead of once per op.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "ldmsim/kernels/operator.hpp"

namespace ldmsim {

/// Where matrices lie in a tensor: row r of matrix b begins at element offset + b * batch + r * pitch, its elements
/// one apart.
struct MatrixPlacement {
  std::uint64_t offset = 0, batch = 0, pitch = 0;
};

/// True when `op` rearranges the fp16 elements of its one input as a strided view of it (slice, expand), a
/// reinterpretation (reshape, flatten) or a transpose that keeps the last axis last.
bool is_view_step(const BoundOp& op);

/// True when `op` is a transpose of fp16 matrices that swaps their rows and columns (the last axis moves): it can
/// end a chain, reading its matrices in place from the chain's input.
bool is_swap_step(const BoundOp& op);

/// True when `op` is a view step that moves no data (a reshape or flatten).
bool is_reinterpretation(const BoundOp& op);

/// One op doing what `chain` does, each op reading the one output of the op before it: a copy of one strided view
/// of the first op's input, or, when the last op is a swap step, that swap reading its matrices' rows in place.
/// nullptr when an op is not a view step or the composition is not one strided view (a reshape that merges axes
/// the steps before it made non-contiguous), or the swap's rows are not runs of the input.
std::unique_ptr<BoundOp> compose_view_chain(std::span<const BoundOp* const> chain);

/// Where the output of `op`, a composed view op (compose_view_chain), seen as [batches, rows, cols], lies in the op's
/// input: as rows of the input (`transposed` false), or, for a chain that ends in a swap, as columns: the output's
/// matrix b is the transpose of the input's [cols, rows] matrix b placed there (`transposed` true). nullopt when the
/// rows (or the swapped matrices' rows) are not runs of the input.
struct ViewMatrices {
  MatrixPlacement at;
  bool transposed = false;
};
std::optional<ViewMatrices> view_matrices(const BoundOp& op, std::uint64_t batches, std::uint64_t rows,
                                          std::uint64_t cols);

}  // namespace ldmsim
