// How a memory-intensive operator takes part in a fused kernel (docs/fusion.md). An op describes its arithmetic
// once, as the fusion pass needs it: a point-wise function of one or two broadcast operands, a reduction over a
// block of adjacent axes, or one of the normalisations that the fused kernel lowers to those two (softmax,
// layer_norm, inference batch normalisation). Compute-intensive and layout ops have no form: they cut the graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ldmsim {

enum class ReduceMode : std::uint8_t { kSum, kMean, kMax, kMin };

struct FusionForm {
  enum class Kind : std::uint8_t {
    kNone,       ///< not fusable (compute-intensive, layout, multi-output)
    kPointwise,  ///< y = fn(a[, b]) with numpy broadcasting
    kReduce,     ///< reduce input 0 over axes [axis_begin, axis_end) (the block of axes larger than 1)
    kSoftmax,    ///< softmax over the trailing axes from axis_begin
    kLayerNorm,  ///< (x - mean) / sqrt(var + epsilon) * scale (+ bias) over the trailing axes from axis_begin
    kBatchNorm,  ///< NCHW inference: (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]
  };
  Kind kind = Kind::kNone;
  /// kPointwise: the op's own fp32 arithmetic (the unfused kernel's), b unused for unary ops, and its flops.
  std::function<float(float, float)> fn;
  /// kPointwise, optional: fn over n elements, y[i] = fn(a[i * a_step], b[i * b_step]) (steps 0 or 1; b null for a
  /// unary op), with fn's exact arithmetic; fused kernels call it once per row instead of fn per element.
  std::function<void(const float* a, std::size_t a_step, const float* b, std::size_t b_step, float* y, std::size_t n)>
      run;
  std::uint64_t flops = 1;
  ReduceMode mode = ReduceMode::kSum;
  std::size_t axis_begin = 0, axis_end = 0;
  bool keepdims = true;
  float epsilon = 0.0f;
};

}  // namespace ldmsim
