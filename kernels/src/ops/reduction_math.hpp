// Private: how the reductions combine values, shared by the reduce kernels and the fused kernel.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "ldmsim/kernels/fusion_form.hpp"

namespace ldmsim::ops {

/// The value a reduction starts from: -inf for max, +inf for min, 0 for sums.
template <typename T = float>
T initial(ReduceMode r) {
  switch (r) {
    case ReduceMode::kMax:
      return -std::numeric_limits<T>::infinity();
    case ReduceMode::kMin:
      return std::numeric_limits<T>::infinity();
    default:
      return T{0};
  }
}

/// Max and min propagate NaN, as numpy and ONNX do (std::max alone would drop it).
template <typename T>
T combine(ReduceMode r, T acc, T v) {
  switch (r) {
    case ReduceMode::kMax:
      return std::isnan(v) || std::isnan(acc) ? std::numeric_limits<T>::quiet_NaN() : std::max(acc, v);
    case ReduceMode::kMin:
      return std::isnan(v) || std::isnan(acc) ? std::numeric_limits<T>::quiet_NaN() : std::min(acc, v);
    default:
      return acc + v;
  }
}

}  // namespace ldmsim::ops
