// Private: conv's "depthwise" algorithm, a direct kernel on the vector unit for convolutions whose output channels
// each read one input channel (groups == C: depthwise, with any channel multiplier). The GEMM algorithms batch such a
// conv as one [K/groups, R*S] x [R*S, P*Q] product per channel, a single-row matrix on the multiply engine; this
// kernel deals output planes to the cores instead and accumulates the R*S taps of each output in place.
#pragma once

#include <string>

#include "activation.hpp"
#include "conv_geometry.hpp"
#include "ldmsim/kernels/operator.hpp"

namespace ldmsim::ops {

/// True when `g` is grouped and every output channel reads exactly one input channel (a conv of one input channel
/// and one group is a plain product: [K, R*S] x [R*S, P*Q] on the matrix engine).
inline bool is_depthwise(const ConvGeometry& g) {
  return g.groups > 1 && g.cg() == 1;
}

struct DepthwiseConv {
  ConvGeometry g;
  DevicePtr<const f16> x, w, bias, residual;  ///< bias and residual unset when the conv has none
  Layout xl, wl, bias_layout, residual_layout, yl;
  DevicePtr<f16> y;
  bool has_bias = false, has_residual = false;
  bool residual_first = false;  ///< Y = R + conv (else conv + R): which NaN a sum of two keeps
  Activation activation;
};

/// Runs a depthwise conv (is_depthwise(job.g)) on every core of every group. Each output is the sum of its taps in
/// kernel row, then column order from zero, plus the bias, in fp32 (the order the GEMM algorithms add the products
/// of their single-channel image rows in, so the results are bit-identical to theirs for finite taps: a tap over the
/// padding adds nothing here, where the GEMM adds tap x 0, NaN for an infinite tap); then the residual after
/// rounding and the activation, as the multiply engine's store does.
void run_depthwise_conv(Machine& machine, const DepthwiseConv& job, const std::string& label);

}  // namespace ldmsim::ops
