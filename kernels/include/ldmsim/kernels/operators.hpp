// The built-in fp16 operators. Each factory returns a complete ldmsim::Operator (shape inference, padding
// class per tensor, device kernel, fp32 reference, cost, tolerance); register_builtin_operators adds them all.
#pragma once

#include "ldmsim/runtime/operator.hpp"

namespace ldmsim::kernels {

/// relu, sigmoid, tanh: 1-D class.
Operator relu_operator();
Operator sigmoid_operator();
Operator tanh_operator();
/// add, mul of equal shapes: 1-D class.
Operator add_operator();
Operator mul_operator();
/// softmax over the flattened c*h*w of each n: 2-D class (rows are samples).
Operator softmax_operator();
/// fc: Y[n,k] = sum_m X[n,m] W[k,m] + b[k]; 2-D class.
Operator fc_operator();
/// max_pool / avg_pool over NCHW with kernel, stride, pad: 2-D class (planes in pairs, or a zero after every w).
Operator max_pool_operator();
Operator avg_pool_operator();
/// spatialbn inference: 2-D class (planes); spatialbn training: 3-D class.
Operator spatialbn_operator();
Operator spatialbn_train_operator();

/// Adds every built-in operator to `registry` (idempotent). Call it before running workloads.
void register_builtin_operators(Registry& registry);

}  // namespace ldmsim::kernels
