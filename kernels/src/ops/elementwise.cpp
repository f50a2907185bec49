// Element-wise operators, 1-D class: unary relu, sigmoid, tanh, exp, log, sqrt, reciprocal, erf, gelu (exact or
// tanh-approximated), clip (min/max; ReLU6), hardsigmoid, hardswish, neg, abs and binary add, sub, mul, div, pow,
// min, max with numpy broadcasting. Each core owns
// an even-bounded share of the output buffer and walks it in double-buffered tiles; an input of the output's shape
// streams tile by tile, a broadcast input (a [C] bias, a scalar) is read into ldm once and indexed per element.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "activation.hpp"
#include "broadcast_index.hpp"
#include "ldmsim/kernels/erf_floats.hpp"
#include "ldmsim/kernels/exp_floats.hpp"
#include "ldmsim/kernels/streaming.hpp"
#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

enum class Fn : std::uint8_t {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kErf,
  kGelu,
  kGeluTanh,
  kClip,
  kHardSigmoid,
  kHardSwish,
  kNeg,
  kAbs,
  kLeakyRelu,
  kElu,
  kSelu,
  kCelu,
  kSoftplus,
  kSoftsign,
  kThresholdedRelu,
  kPRelu,
  kSin,
  kCos,
  kFloor,
  kCeil,
  kRound,
  kSign,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMin,
  kMax
};

constexpr double kSqrtHalf = 0.70710678118654752440;       // 1 / sqrt(2)
constexpr double kSqrtTwoOverPi = 0.79788456080286535588;  // sqrt(2 / pi)

/// A function and its parameters (clip's bounds; hardsigmoid's alpha in lo and beta in hi; selu's alpha in lo and
/// gamma in hi; leaky_relu's, elu's, celu's and thresholded_relu's alpha in lo), parsed once at bind.
struct Function {
  Fn fn = Fn::kRelu;
  float lo = 0.0f, hi = 0.0f;
};

/// hardsigmoid's arithmetic, max(0, min(1, alpha * a + beta)); a NaN stays NaN.
inline float hard_sigmoid_value(float a, float alpha, float beta) {
  const float v = alpha * a + beta;
  return std::isnan(v) ? v : std::min(std::max(v, 0.0f), 1.0f);
}

/// min and max as numpy's minimum and maximum: a NaN in either operand comes out, a's when both are (x86's
/// scalar a + b; written as a + a and b + b so that a vectorised loop, which may swap a commutative operation's
/// operands, gives the same NaN).
inline float min_value(float a, float b) {
  return std::isnan(a) ? a + a : std::isnan(b) ? b + b : std::min(a, b);
}
inline float max_value(float a, float b) {
  return std::isnan(a) ? a + a : std::isnan(b) ? b + b : std::max(a, b);
}

// The kernel's fp32 arithmetic: calls visit with the function as a callable (float, float) -> float, so a loop
// over elements can run inside the dispatch, not around it.
template <typename Visit>
decltype(auto) with_arithmetic(const Function& f, Visit&& visit) {
  switch (f.fn) {
    case Fn::kRelu:
      return visit([](float a, float) { return relu_value(a); });
    case Fn::kSigmoid:
      return visit([](float a, float) { return 1.0f / (1.0f + exp_float(-a)); });
    case Fn::kTanh:
      return visit([](float a, float) { return std::tanh(a); });
    case Fn::kExp:
      return visit([](float a, float) { return exp_float(a); });
    case Fn::kLog:
      return visit([](float a, float) { return std::log(a); });
    case Fn::kSqrt:
      return visit([](float a, float) { return std::sqrt(a); });
    case Fn::kReciprocal:
      return visit([](float a, float) { return 1.0f / a; });
    case Fn::kErf:
      return visit([](float a, float) { return erf_float(a); });
    case Fn::kGelu:
      return visit([](float a, float) { return 0.5f * a * (1.0f + erf_float(a * static_cast<float>(kSqrtHalf))); });
    case Fn::kGeluTanh:
      return visit([](float a, float) {
        return 0.5f * a * (1.0f + std::tanh(static_cast<float>(kSqrtTwoOverPi) * (a + 0.044715f * a * a * a)));
      });
    case Fn::kClip:
      return visit([lo = f.lo, hi = f.hi](float a, float) { return clip_value(a, lo, hi); });
    case Fn::kHardSigmoid:
      return visit([alpha = f.lo, beta = f.hi](float a, float) { return hard_sigmoid_value(a, alpha, beta); });
    case Fn::kHardSwish:
      return visit([](float a, float) { return a * hard_sigmoid_value(a, 1.0f / 6.0f, 0.5f); });
    case Fn::kNeg:
      return visit([](float a, float) { return -a; });
    case Fn::kLeakyRelu:
      return visit([alpha = f.lo](float a, float) { return a < 0.0f ? alpha * a : a; });
    case Fn::kPRelu:
      return visit([](float a, float slope) { return a < 0.0f ? slope * a : a; });
    case Fn::kElu:
      return visit([alpha = f.lo](float a, float) { return a < 0.0f ? alpha * std::expm1(a) : a; });
    case Fn::kSelu:
      return visit([alpha = f.lo, gamma = f.hi](float a, float) {
        return a <= 0.0f ? gamma * (alpha * std::expm1(a)) : gamma * a;
      });
    case Fn::kCelu:
      return visit([alpha = f.lo](float a, float) { return a > 0.0f ? a : alpha * std::expm1(a / alpha); });
    case Fn::kSoftplus:  // log(1 + e^a) without overflow: max(a, 0) + log(1 + e^-|a|); a NaN comes out as a's
      return visit([](float a, float) {
        const float y = std::max(a, 0.0f) + std::log1p(std::exp(-std::fabs(a)));
        return std::isnan(a) ? a + a : y;
      });
    case Fn::kSoftsign:
      return visit([](float a, float) { return a / (1.0f + std::fabs(a)); });
    case Fn::kThresholdedRelu:
      return visit([alpha = f.lo](float a, float) { return a > alpha ? a : 0.0f; });
    case Fn::kSin:
      return visit([](float a, float) { return std::sin(a); });
    case Fn::kCos:
      return visit([](float a, float) { return std::cos(a); });
    case Fn::kFloor:
      return visit([](float a, float) { return std::floor(a); });
    case Fn::kCeil:
      return visit([](float a, float) { return std::ceil(a); });
    case Fn::kRound:  // halves to even, as ONNX (the default rounding mode)
      return visit([](float a, float) { return std::nearbyint(a); });
    case Fn::kSign:  // a NaN stays NaN
      return visit([](float a, float) { return a > 0.0f ? 1.0f : a < 0.0f ? -1.0f : a == 0.0f ? 0.0f : a; });
    case Fn::kAbs:
      return visit([](float a, float) { return std::fabs(a); });
    case Fn::kMin:
      return visit([](float a, float b) { return min_value(a, b); });
    case Fn::kMax:
      return visit([](float a, float b) { return max_value(a, b); });
    // A NaN in a comes out whatever b is (add_value, activation.hpp); mul likewise.
    case Fn::kAdd:
      return visit([](float a, float b) { return add_value(a, b); });
    case Fn::kSub:
      return visit([](float a, float b) { return a - b; });
    case Fn::kMul:
      return visit([](float a, float b) { return std::isnan(a) ? a * a : a * b; });
    case Fn::kDiv:
      return visit([](float a, float b) { return a / b; });
    case Fn::kPow:
      return visit([](float a, float b) { return std::pow(a, b); });
  }
  return visit([](float a, float) { return a; });
}

float apply(const Function& f, float a, float b) {
  return with_arithmetic(f, [&](auto op) { return op(a, b); });
}

/// y[i] = op(a[i * a_step], b[i * b_step]) for i < n; steps of 1 (a run) or 0 (one value for all), fixed at
/// compile time so the loop vectorises where the arithmetic does.
template <std::size_t AStep, std::size_t BStep, typename Op>
void apply_each(const float* a, const float* b, float* y, std::size_t n, Op op) {
  for (std::size_t i = 0; i < n; ++i) y[i] = op(a[i * AStep], b[i * BStep]);
}

/// apply over n elements: a and b advance by their steps (1 or 0; b may be null for a unary function).
void apply_run(const Function& f, const float* a, std::size_t a_step, const float* b, std::size_t b_step, float* y,
               std::size_t n) {
  if (a_step > 1 || b_step > 1) throw std::logic_error("apply_run: steps are 0 or 1");
  if (a_step == 1 && f.fn == Fn::kExp) return exp_floats(a, y, n);
  if (a_step == 1 && f.fn == Fn::kSigmoid) {  // 1 / (1 + e^-a), the exponentials a run at a time
    for (std::size_t i = 0; i < n; ++i) y[i] = -a[i];
    exp_floats(y, y, n);
    for (std::size_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + y[i]);
    return;
  }
  if (a_step == 1 && f.fn == Fn::kErf) return erf_floats(a, y, n);
  if (a_step == 1 && f.fn == Fn::kGelu) {  // 0.5 a (1 + erf(a / sqrt 2)), the erfs a block at a time (y may be a)
    constexpr std::size_t kBlock = 256;
    float e[kBlock];
    for (std::size_t at = 0; at < n; at += kBlock) {
      const std::size_t count = std::min(kBlock, n - at);
      for (std::size_t i = 0; i < count; ++i) e[i] = a[at + i] * static_cast<float>(kSqrtHalf);
      erf_floats(e, e, count);
      for (std::size_t i = 0; i < count; ++i) y[at + i] = 0.5f * a[at + i] * (1.0f + e[i]);
    }
    return;
  }
  const float zero = 0.0f;
  if (b == nullptr) b = &zero, b_step = 0;
  with_arithmetic(f, [&](auto op) {
    if (a_step == 1 && b_step == 1) return apply_each<1, 1>(a, b, y, n, op);
    if (a_step == 1) return apply_each<1, 0>(a, b, y, n, op);
    if (b_step == 1) return apply_each<0, 1>(a, b, y, n, op);
    return apply_each<0, 0>(a, b, y, n, op);
  });
}

// The reference's arithmetic, in double (an independent check of the kernel's, not a copy of it).
double reference_value(const Function& f, double a, double b) {
  switch (f.fn) {
    case Fn::kRelu:
      return std::max(a, 0.0);
    case Fn::kSigmoid:
      return 0.5 * (1.0 + std::tanh(0.5 * a));
    case Fn::kTanh:
      return std::tanh(a);
    case Fn::kExp:
      return std::exp(a);
    case Fn::kLog:
      return std::log(a);
    case Fn::kSqrt:
      return std::sqrt(a);
    case Fn::kReciprocal:
      return 1.0 / a;
    case Fn::kErf:
      return std::erf(a);
    case Fn::kGelu:  // through the complementary error function: exact in the tail where 1 + erf cancels
      return 0.5 * a * std::erfc(-a * kSqrtHalf);
    case Fn::kGeluTanh:
      return 0.5 * a * (1.0 + std::tanh(kSqrtTwoOverPi * (a + 0.044715 * a * a * a)));
    case Fn::kClip:
      return a < f.lo ? f.lo : a > f.hi ? f.hi : a;
    case Fn::kHardSigmoid:
      return std::clamp(static_cast<double>(f.lo) * a + static_cast<double>(f.hi), 0.0, 1.0);
    case Fn::kHardSwish:  // x * relu6(x + 3) / 6, PyTorch's definition
      return a * std::clamp(a + 3.0, 0.0, 6.0) / 6.0;
    case Fn::kNeg:
      return -a;
    case Fn::kLeakyRelu:
      return a < 0.0 ? f.lo * a : a;
    case Fn::kPRelu:
      return a < 0.0 ? b * a : a;
    case Fn::kElu:
      return a < 0.0 ? f.lo * (std::exp(a) - 1.0) : a;
    case Fn::kSelu:  // ONNX's definition
      return a <= 0.0 ? f.hi * (f.lo * std::exp(a) - f.lo) : f.hi * a;
    case Fn::kCelu:  // ONNX's definition
      return std::max(0.0, a) + std::min(0.0, f.lo * (std::exp(a / f.lo) - 1.0));
    case Fn::kSoftplus:
      return a > 0.0 ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a));
    case Fn::kSoftsign:
      return a / (1.0 + std::abs(a));
    case Fn::kThresholdedRelu:
      return a > f.lo ? a : 0.0;
    case Fn::kSin:
      return std::sin(a);
    case Fn::kCos:
      return std::cos(a);
    case Fn::kFloor:
      return std::floor(a);
    case Fn::kCeil:
      return std::ceil(a);
    case Fn::kRound: {  // halves to even, written out
      const double below = std::floor(a), rest = a - below;
      return rest > 0.5 || (rest == 0.5 && std::fmod(below, 2.0) != 0.0) ? below + 1.0 : below;
    }
    case Fn::kSign:
      return std::isnan(a) ? a : static_cast<double>((a > 0.0) - (a < 0.0));
    case Fn::kAbs:
      return std::abs(a);
    case Fn::kMin:
      return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b);
    case Fn::kMax:
      return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
    case Fn::kAdd:
      return a + b;
    case Fn::kSub:
      return a - b;
    case Fn::kMul:
      return a * b;
    case Fn::kDiv:
      return a / b;
    case Fn::kPow:
      return std::pow(a, b);
  }
  return a;
}

std::uint64_t flops_of(Fn fn) {
  switch (fn) {
    case Fn::kSigmoid:
    case Fn::kTanh:
    case Fn::kExp:
    case Fn::kLog:
    case Fn::kSqrt:
    case Fn::kReciprocal:
    case Fn::kErf:
    case Fn::kPow:
      return 4;
    case Fn::kGelu:
    case Fn::kGeluTanh:
      return 8;
    case Fn::kClip:
    case Fn::kHardSigmoid:
    case Fn::kLeakyRelu:
    case Fn::kPRelu:
    case Fn::kThresholdedRelu:
      return 2;
    case Fn::kSoftsign:
      return 3;
    case Fn::kSin:
    case Fn::kCos:
      return 4;
    case Fn::kElu:
    case Fn::kSelu:
    case Fn::kCelu:
    case Fn::kSoftplus:
      return 4;
    case Fn::kHardSwish:
      return 4;
    default:
      return 1;
  }
}

/// What one input of the kernel is: streamed with the output's tiles, or broadcast from ldm.
struct Operand {
  DevicePtr<const f16> ptr;
  Layout layout;
  bool broadcast = false;
  Shape shape;
};

struct FlatArgs {
  Function fn;
  std::array<Operand, 2> in;
  std::size_t arity = 1;
  DevicePtr<f16> out;
  Layout out_layout;
  Shape out_shape;
};

void flat_kernel(Core& core, const FlatArgs& a) {
  std::array<DevicePtr<const f16>, 2> streamed{};
  std::array<std::size_t, 2> stream_slot{};  // input k's index among the streamed inputs
  std::size_t count = 0;
  for (std::size_t k = 0; k < a.arity; ++k) {
    if (a.in[k].broadcast) continue;
    stream_slot[k] = count;
    streamed[count++] = a.in[k].ptr;
  }
  // A broadcast input is read whole by every core with a tile: a tile is at least as large, so a small output
  // does not spread to cores that would read more of it than they compute (a squeeze-excitation gate).
  std::size_t least = tiling::kLeastSpreadTile;
  for (std::size_t k = 0; k < a.arity; ++k) {
    if (a.in[k].broadcast) least = std::max(least, a.in[k].layout.total);
  }
  const std::size_t max_tile =
      tiling::spread_tile(core, a.out_layout.total, tiling::streaming_tile(core, count), least);
  if (tiling::worker_index(core) * tiling::floor_even(max_tile) >= a.out_layout.total) return;  // no tile for me
  // Broadcast inputs are resident (one get each), kept in logical order so that a broadcast index addresses them
  // whatever padding they carry. Their ldm is freed before the tiles' buffers are allocated.
  std::array<std::vector<float>, 2> resident;
  for (std::size_t k = 0; k < a.arity; ++k) {
    if (!a.in[k].broadcast) continue;
    auto buf = core.ldm().alloc<f16>(a.in[k].layout.total);
    core.get(buf, a.in[k].ptr).wait();
    std::vector<float> padded(a.in[k].layout.total);
    to_floats(buf, 0, padded.size(), padded.data());
    core.ldm().free(buf);
    const std::size_t n = a.in[k].shape.elements();
    resident[k].resize(n);
    for_each_run(a.in[k].layout, 0, n, [&](std::size_t logical, std::size_t offset, std::size_t run) {
      std::copy_n(padded.begin() + static_cast<std::ptrdiff_t>(offset), run,
                  resident[k].begin() + static_cast<std::ptrdiff_t>(logical));
    });
  }
  auto compute = [&](tiling::Range tile, std::span<const std::span<const float>> xs, std::span<float> ys) {
    // Padding positions are zero; logical runs inside the tile are computed (broadcast operands by logical index).
    std::size_t live = 0, written = 0;
    const std::size_t first = a.out_layout.logical_at_or_after(tile.begin);
    const std::size_t last = a.out_layout.logical_at_or_after(tile.end);
    for_each_run(a.out_layout, first, last, [&](std::size_t logical, std::size_t offset, std::size_t run) {
      const std::size_t t = offset - tile.begin;
      std::fill(ys.begin() + static_cast<std::ptrdiff_t>(written), ys.begin() + static_cast<std::ptrdiff_t>(t), 0.0f);
      written = t + run;
      live += run;
      if (a.arity == 1) {
        apply_run(a.fn, &xs[0][t], 1, nullptr, 0, &ys[t], run);
        return;
      }
      if (!a.in[0].broadcast && !a.in[1].broadcast) {
        apply_run(a.fn, &xs[stream_slot[0]][t], 1, &xs[stream_slot[1]][t], 1, &ys[t], run);
        return;
      }
      std::array<std::optional<BroadcastIndex>, 2> bidx;
      for (std::size_t k = 0; k < 2; ++k) {
        if (a.in[k].broadcast) bidx[k].emplace(a.in[k].shape, a.out_shape, logical);
      }
      for (std::size_t i = 0; i < run; ++i) {
        float v[2];
        for (std::size_t k = 0; k < 2; ++k) {
          if (bidx[k]) {
            v[k] = resident[k][bidx[k]->index()];
            bidx[k]->next();
          } else {
            v[k] = xs[stream_slot[k]][t + i];
          }
        }
        ys[t + i] = apply(a.fn, v[0], v[1]);
      }
    });
    std::fill(ys.begin() + static_cast<std::ptrdiff_t>(written), ys.end(), 0.0f);
    core.compute({.flops = flops_of(a.fn.fn) * live});
  };
  tiling::stream_dealt_tiles(core, std::span<const DevicePtr<const f16>>(streamed.data(), count), a.out,
                             a.out_layout.total, max_tile, compute);
}

class ElementwiseOp final : public BoundOp {
 public:
  ElementwiseOp(Function fn, std::vector<Shape> in, Shape out) : BoundOp(std::move(in), {std::move(out)}), fn_(fn) {}
  /// clip with the bounds as given (an int32 input's are not held within fp16's range).
  ElementwiseOp(Function fn, std::vector<Shape> in, Shape out, std::array<double, 2> given_bounds)
      : ElementwiseOp(fn, std::move(in), std::move(out)) {
    given_bounds_ = given_bounds;
  }

  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  bool runs_in_producer_layout() const override { return true; }

  /// add, sub, mul, div, min, max, neg, abs and clip of int32 tensors: their integer form (typed_elementwise.cpp).
  std::unique_ptr<BoundOp> with_element_type(DType type) const override {
    static const std::map<Fn, IntegerFn> kIntegerForms{
        {Fn::kAdd, IntegerFn::kAdd}, {Fn::kSub, IntegerFn::kSub}, {Fn::kMul, IntegerFn::kMul},
        {Fn::kDiv, IntegerFn::kDiv}, {Fn::kMin, IntegerFn::kMin}, {Fn::kMax, IntegerFn::kMax},
        {Fn::kNeg, IntegerFn::kNeg}, {Fn::kAbs, IntegerFn::kAbs}, {Fn::kClip, IntegerFn::kClip}};
    const auto form = kIntegerForms.find(fn_.fn);
    if (type != DType::kI32 || form == kIntegerForms.end()) return nullptr;
    return integer_elementwise(form->second, input_shapes(), output_shapes()[0], given_bounds_);
  }

  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const Shape& y = output_shapes()[0];
    FlatArgs a{fn_, {}, in.size(), out[0].ptr, out[0].layout(), y};
    DeviceScratch scratch(m);
    for (std::size_t k = 0; k < in.size(); ++k) {
      const bool broadcast = !(input_shapes()[k] == y);
      a.in[k] = Operand{DevicePtr<const f16>(in[k].ptr), in[k].layout(), broadcast, input_shapes()[k]};
      if (!broadcast && !in[k].layout().same_placement(out[0].layout())) {
        reject(label, fmt::format("input {} is laid out as {} but the output as {}: stage both with one plan", k,
                                  in[k].plan.describe(), out[0].plan.describe()));
      }
      if (broadcast && in[k].layout().total * sizeof(f16) > m.arch().ldm_bytes / 4) {
        // Too large to be resident in every core's ldm: expanded to the output's shape and layout first (a view
        // copy with stride 0 on the repeated axes, into scratch device memory), then streamed like the output.
        const DeviceTensor expanded = scratch.tensor(fmt::format("{}:expanded{}", label, k), out[0].plan);
        run_view_copy(m, fmt::format("{}:expand{}", label, k), broadcast_view(input_shapes()[k], y),
                      DevicePtr<const f16>(in[k].ptr), in[k].layout(), expanded.ptr, out[0].layout());
        a.in[k] = Operand{DevicePtr<const f16>(expanded.ptr), out[0].layout(), false, y};
      }
    }
    launch_all(m, label, flat_kernel, a);
  }

  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& out = output_shapes()[0];
    HostTensor y{out, std::vector<float>(out.elements())};
    const auto sa = broadcast_strides(in[0].shape, out);
    std::array<std::uint64_t, Shape::kMaxRank> sb{};
    if (in.size() == 2) sb = broadcast_strides(in[1].shape, out);
    for (std::uint64_t i = 0; i < out.elements(); ++i) {
      // Decompose i into coordinates (an independent computation from the kernel's incremental walk).
      std::uint64_t rest = i, ia = 0, ib = 0;
      for (std::size_t d = out.rank(); d-- > 0;) {
        const std::uint64_t c = rest % out[d];
        rest /= out[d];
        ia += c * sa[d];
        ib += c * sb[d];
      }
      y.data[i] = static_cast<float>(reference_value(fn_, in[0].data[ia], in.size() == 2 ? in[1].data[ib] : 0.0));
    }
    return {y};
  }

  OpCost cost() const override { return {flops_of(fn_.fn) * output_shapes()[0].elements(), 0}; }
  FusionForm fusion_form() const override {
    FusionForm form{.kind = FusionForm::Kind::kPointwise};
    form.fn = [f = fn_](float a, float b) { return apply(f, a, b); };
    form.run = [f = fn_](const float* a, std::size_t a_step, const float* b, std::size_t b_step, float* y,
                         std::size_t n) { apply_run(f, a, a_step, b, b_step, y, n); };
    form.flops = flops_of(fn_.fn);
    return form;
  }
  Tolerance tolerance() const override {
    // relu, clip, neg, abs, min, max, floor, ceil, round and sign only select, flip a sign or give a whole number:
    // one fp16 rounding of the output at most.
    const bool selects = fn_.fn == Fn::kRelu || fn_.fn == Fn::kClip || fn_.fn == Fn::kNeg || fn_.fn == Fn::kAbs ||
                         fn_.fn == Fn::kMin || fn_.fn == Fn::kMax || fn_.fn == Fn::kFloor || fn_.fn == Fn::kCeil ||
                         fn_.fn == Fn::kRound || fn_.fn == Fn::kSign;
    return selects ? Tolerance{0.0, 1.0 / 1024} : Tolerance{1e-3, 1.0 / 1024};
  }

 private:
  Function fn_;
  std::array<double, 2> given_bounds_{-std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::infinity()};
};

template <Fn kFn>
std::unique_ptr<BoundOp> bind_unary(std::string_view, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {});
  return std::make_unique<ElementwiseOp>(Function{kFn}, std::vector<Shape>(in.begin(), in.end()), in[0]);
}

std::unique_ptr<BoundOp> bind_gelu(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"approximate"});
  std::string approximate = "none";
  if (const auto v = attrs.find("approximate")) approximate = v->string();
  if (approximate != "none" && approximate != "tanh") {
    reject(name, fmt::format("approximate must be \"none\" or \"tanh\", got \"{}\"", approximate));
  }
  return std::make_unique<ElementwiseOp>(Function{approximate == "tanh" ? Fn::kGeluTanh : Fn::kGelu},
                                         std::vector<Shape>(in.begin(), in.end()), in[0]);
}

std::unique_ptr<BoundOp> bind_clip(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"min", "max"});
  // The bounds as given (an int32 input's), and held within fp16's finite range for an f16 input.
  const double inf = std::numeric_limits<double>::infinity();
  const double lo = num_attr(attrs, "min", -inf), hi = num_attr(attrs, "max", inf);
  if (lo > hi) reject(name, fmt::format("min {} is above max {}", lo, hi));
  const auto held = [](double v) { return static_cast<float>(std::clamp(v, -65504.0, 65504.0)); };
  return std::make_unique<ElementwiseOp>(Function{Fn::kClip, held(lo), held(hi)},
                                         std::vector<Shape>(in.begin(), in.end()), in[0],
                                         std::array<double, 2>{lo, hi});
}

std::unique_ptr<BoundOp> bind_hard_sigmoid(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"alpha", "beta"});
  const double alpha = num_attr(attrs, "alpha", 0.2), beta = num_attr(attrs, "beta", 0.5);
  if (!std::isfinite(alpha) || !std::isfinite(beta) || std::fabs(alpha) > 65504.0 || std::fabs(beta) > 65504.0) {
    reject(name, fmt::format("alpha {} and beta {} must be finite fp16 values", alpha, beta));
  }
  return std::make_unique<ElementwiseOp>(
      Function{Fn::kHardSigmoid, static_cast<float>(alpha), static_cast<float>(beta)},
      std::vector<Shape>(in.begin(), in.end()), in[0]);
}

/// An fp16-finite attribute of an activation (its default when absent).
float activation_parameter(std::string_view name, const JsonField& attrs, const char* key, double fallback) {
  const double v = num_attr(attrs, key, fallback);
  if (!std::isfinite(v) || std::fabs(v) > 65504.0)
    reject(name, fmt::format("{} {} must be a finite fp16 value", key, v));
  return static_cast<float>(v);
}

/// leaky_relu, elu, celu and thresholded_relu: `alpha` (kFn's default); selu: `alpha` and `gamma`.
template <Fn kFn>
std::unique_ptr<BoundOp> bind_with_alpha(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  constexpr bool selu = kFn == Fn::kSelu;
  if (selu) {
    check_attrs(attrs, {"alpha", "gamma"});
  } else {
    check_attrs(attrs, {"alpha"});
  }
  constexpr double fallback = kFn == Fn::kLeakyRelu ? 0.01 : selu ? 1.67326319217681884765625 : 1.0;
  Function f{kFn, activation_parameter(name, attrs, "alpha", fallback), 0.0f};
  if (selu) f.hi = activation_parameter(name, attrs, "gamma", 1.05070102214813232421875);
  if (kFn == Fn::kCelu && f.lo == 0.0f) reject(name, "alpha must not be 0 (celu divides by it)");
  return std::make_unique<ElementwiseOp>(f, std::vector<Shape>(in.begin(), in.end()), in[0]);
}

template <Fn kFn>
std::unique_ptr<BoundOp> bind_binary(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {});
  Shape out;
  try {
    out = broadcast_shapes(in[0], in[1]);
  } catch (const ConfigError& e) {
    reject(name, e.what());
  }
  return std::make_unique<ElementwiseOp>(Function{kFn}, std::vector<Shape>(in.begin(), in.end()), out);
}

}  // namespace

void add_elementwise_kinds(OperatorRegistry& registry) {
  // Every kind here splits as an element-wise op; `onnx`: the ONNX op types that map onto it one to one.
  const auto add = [&](const char* name, Arity arity, FunctionKind::Binder bind, std::vector<std::string> onnx,
                       StoreFoldRole fold = StoreFoldRole::kNone) {
    registry.add(std::make_unique<FunctionKind>(name, arity, bind,
                                                OperatorTraits{SplitRule::kElementwise, fold, std::move(onnx)}));
  };
  const Arity unary{1, 1, 1}, binary{2, 2, 1};
  add("relu", unary, bind_unary<Fn::kRelu>, {"Relu"}, StoreFoldRole::kActivation);
  add("sigmoid", unary, bind_unary<Fn::kSigmoid>, {"Sigmoid"});
  add("tanh", unary, bind_unary<Fn::kTanh>, {"Tanh"});
  add("exp", unary, bind_unary<Fn::kExp>, {"Exp"});
  add("log", unary, bind_unary<Fn::kLog>, {"Log"});
  add("sqrt", unary, bind_unary<Fn::kSqrt>, {"Sqrt"});
  add("reciprocal", unary, bind_unary<Fn::kReciprocal>, {"Reciprocal"});
  add("erf", unary, bind_unary<Fn::kErf>, {"Erf"});
  add("gelu", unary, bind_gelu, {});
  add("clip", unary, bind_clip, {}, StoreFoldRole::kActivation);
  add("hardsigmoid", unary, bind_hard_sigmoid, {});
  add("hardswish", unary, bind_unary<Fn::kHardSwish>, {"HardSwish"});
  add("neg", unary, bind_unary<Fn::kNeg>, {"Neg"});
  add("abs", unary, bind_unary<Fn::kAbs>, {"Abs"});
  add("leaky_relu", unary, bind_with_alpha<Fn::kLeakyRelu>, {});
  add("elu", unary, bind_with_alpha<Fn::kElu>, {});
  add("selu", unary, bind_with_alpha<Fn::kSelu>, {});
  add("celu", unary, bind_with_alpha<Fn::kCelu>, {});
  add("thresholded_relu", unary, bind_with_alpha<Fn::kThresholdedRelu>, {});
  add("softplus", unary, bind_unary<Fn::kSoftplus>, {"Softplus"});
  add("softsign", unary, bind_unary<Fn::kSoftsign>, {"Softsign"});
  add("prelu", binary, bind_binary<Fn::kPRelu>, {"PRelu"});
  add("sin", unary, bind_unary<Fn::kSin>, {"Sin"});
  add("cos", unary, bind_unary<Fn::kCos>, {"Cos"});
  add("floor", unary, bind_unary<Fn::kFloor>, {"Floor"});
  add("ceil", unary, bind_unary<Fn::kCeil>, {"Ceil"});
  add("round", unary, bind_unary<Fn::kRound>, {"Round"});
  add("sign", unary, bind_unary<Fn::kSign>, {"Sign"});
  add("add", binary, bind_binary<Fn::kAdd>, {"Add"}, StoreFoldRole::kResidualAdd);
  add("sub", binary, bind_binary<Fn::kSub>, {"Sub"});
  add("mul", binary, bind_binary<Fn::kMul>, {"Mul"});
  add("div", binary, bind_binary<Fn::kDiv>, {"Div"});
  add("pow", binary, bind_binary<Fn::kPow>, {"Pow"});
  add("min", binary, bind_binary<Fn::kMin>, {});
  add("max", binary, bind_binary<Fn::kMax>, {});
}

}  // namespace ldmsim::ops
