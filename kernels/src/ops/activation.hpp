// Private: what a conv or gemm applies to its output as it stores it: an activation (attribute "activation") and,
// for conv, a residual added in add's arithmetic (attribute "residual"); the fusion pass folds a relu, clip or add
// that alone reads the output into the op (docs/fusion.md). The relu, clip and add kernels use the same functions,
// so the folded op stores exactly the bits of the ops run apart (apply_before_rounding).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ldmsim/sim/json_checked.hpp"

namespace ldmsim::ops {

/// relu's arithmetic: +0 for zeros of either sign, negatives and NaN.
inline float relu_value(float a) {
  return a > 0.0f ? a : 0.0f;
}

/// clip's arithmetic: a NaN stays NaN.
inline float clip_value(float a, float lo, float hi) {
  return std::min(std::max(a, lo), hi);
}

/// add's arithmetic: a NaN in a comes out whatever b is (x86's scalar add returns its first operand's NaN; a
/// vectorised loop may swap the operands of a commutative operation).
inline float add_value(float a, float b) {
  return std::isnan(a) ? a + a : a + b;
}

/// Each value rounded to fp16 and back (the conversions the kernels use).
void round_to_fp16(float* values, std::size_t n);

/// clip's bounds from attrs "min" and "max", clamped to fp16's finite range so "no bound" stays no bound;
/// rejects min above max (naming `op`).
struct ClipBounds {
  float lo = -65504.0f, hi = 65504.0f;
  static ClipBounds parse(std::string_view op, const JsonField& attrs);
};

struct Activation {
  enum class Kind : std::uint8_t { kNone, kRelu, kClip };
  Kind kind = Kind::kNone;
  ClipBounds bounds;  ///< kClip's

  /// attrs "activation" of op `op`: absent (none), "relu", {"type": "relu"} or {"type": "clip", "min": A, "max": B}
  /// (either bound may be left out); anything else is a ConfigError naming the attribute.
  static Activation parse(std::string_view op, const JsonField& attrs);

  explicit operator bool() const { return kind != Kind::kNone; }
  /// Applies it to n fp32 values that are then rounded to fp16, so that they round to the bits the relu or clip
  /// kernel stores for the rounded value (tests/kernels/activation_test.cpp checks every kind of value): relu
  /// commutes with the rounding (monotonic, and +0 for both zeros); clip rounds the values first, since it keeps the
  /// -0 a tiny negative rounds to.
  void apply_before_rounding(float* values, std::size_t n) const;
  /// The fp32 reference's arithmetic (in double).
  double reference(double v) const;
  /// Vector instructions per vector of outputs it adds to the store's element-wise pass.
  std::uint32_t ops() const;
  /// Appends its kind and bounds to a blocking search key (every field of a job is in the key).
  void describe(std::vector<std::uint64_t>& key) const;
  /// {"type": ..., and clip's "min" and "max"}; null when none (for run_metrics).
  nlohmann::json to_json() const;
};

}  // namespace ldmsim::ops
