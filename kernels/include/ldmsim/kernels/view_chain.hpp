// Chains of ops that only rearrange elements (slice, expand, reshape, flatten, a transpose that keeps the last
// axis last), composed into one strided copy, and such a chain ending in a transpose that swaps rows and columns,
// composed into that swap reading in place: a transformer's q/k/v split (slice, reshape, transpose) copies each
// element once instead of once per op.
#pragma once

#include <memory>
#include <span>

#include "ldmsim/kernels/operator.hpp"

namespace ldmsim {

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

}  // namespace ldmsim
