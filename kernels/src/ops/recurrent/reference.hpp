// Private: the fp32 host reference of lstm / gru (reference.cpp).
#pragma once

#include <span>
#include <vector>

#include "ldmsim/kernels/operator.hpp"
#include "recurrent_kernel.hpp"

namespace ldmsim::ops::recurrent {

/// Y, Y_h (and Y_c for LSTM) of inputs X, W, R[, B[, initial_h[, initial_c]]] (logical C-order data).
std::vector<HostTensor> reference_cell(const CellShape& shape, std::span<const HostTensor> inputs);

}  // namespace ldmsim::ops::recurrent
