// Private: each operator file adds its kinds to a registry; OperatorRegistry::builtin() calls them all.
#pragma once

#include <array>

#include "ldmsim/kernels/operator.hpp"

namespace ldmsim::ops {

void add_elementwise_kinds(OperatorRegistry& registry);  // relu ... gelu, clip, add, sub, mul, div, pow
void add_softmax_kind(OperatorRegistry& registry);       // softmax
void add_pool_kinds(OperatorRegistry& registry);         // max_pool, avg_pool
void add_spatialbn_kinds(OperatorRegistry& registry);    // spatialbn, spatialbn_train
void add_layout_kinds(OperatorRegistry& registry);       // reshape, flatten, concat
void add_global_pool_kind(OperatorRegistry& registry);   // global_avg_pool
void add_matmul_kinds(OperatorRegistry& registry);       // matmul, gemm, fc
void add_conv_kind(OperatorRegistry& registry);          // conv
void add_reduce_kinds(OperatorRegistry& registry);       // reduce_sum, reduce_mean, reduce_max, reduce_min
void add_arg_reduce_kinds(OperatorRegistry& registry);   // arg_max, arg_min
void add_cumsum_kind(OperatorRegistry& registry);        // cumsum
void add_top_k_kind(OperatorRegistry& registry);         // top_k
void add_layer_norm_kind(OperatorRegistry& registry);    // layer_norm
void add_transpose_kind(OperatorRegistry& registry);     // transpose (any permutation)
void add_slice_kind(OperatorRegistry& registry);         // slice (starts, ends, axes, steps)
void add_expand_kind(OperatorRegistry& registry);        // expand (numpy broadcasting to a shape)
void add_pad_kind(OperatorRegistry& registry);           // pad (constant, reflect, edge)
void add_recurrent_kinds(OperatorRegistry& registry);    // lstm, gru
void add_gather_kind(OperatorRegistry& registry);        // gather (runtime int32 indices)
// cast, where, equal, less, greater, less_or_equal, greater_or_equal, not, and, or, xor, mod (typed tensors)
void add_typed_elementwise_kinds(OperatorRegistry& registry);

/// The arithmetic of add, sub, mul, div, min, max, neg, abs and clip on int32 tensors (their f16 op's
/// with_element_type): exact, wrapping to 32 bits; div truncates toward zero and traps divide-by-zero; clip holds
/// values within `bounds` (its min and max as given).
enum class IntegerFn : std::uint8_t { kAdd, kSub, kMul, kDiv, kMin, kMax, kNeg, kAbs, kClip };
std::unique_ptr<BoundOp> integer_elementwise(IntegerFn fn, std::vector<Shape> in, Shape out,
                                             std::array<double, 2> bounds);

}  // namespace ldmsim::ops
