// Element-wise ops of typed tensors (kernels/dtype.hpp), with numpy broadcasting:
// - cast (attribute "to": f16, int32 or bool): fp16 rounds to nearest even, int32 truncates toward zero
//   (saturating), bool is "not zero";
// - where(condition bool, x, y): x where the condition holds, else y (x and y of one type, the output's);
// - equal, less, greater, less_or_equal, greater_or_equal of two f16 or two int32 tensors (equal also of bool),
//   giving bool;
// - not, and, or, xor of bool tensors;
// - add, sub, mul, div, min, max, neg, abs of int32 tensors (the f16 ops' integer form, integer_elementwise) and
//   mod (attribute fmod: 0, the divisor's sign as Python's %, int32 only; 1, the dividend's as C's fmod, int32 or
//   f16): exact and wrapping to 32 bits as two's complement hardware does; div truncates toward zero; an integer
//   division or modulo by zero is the fault divide-by-zero naming the core and the element.
// Each core owns a share of the output's elements and streams it tile by tile: inputs of the output's shape are read
// tile by tile, broadcast ones once into ldm and indexed per element. Values are compared and selected as doubles,
// which hold every fp16 and int32 value exactly; integer arithmetic runs in 64 bits and wraps.
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <span>

#include "broadcast_index.hpp"
#include "ldmsim/sim/fault.hpp"
#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

enum class TypedFn : std::uint8_t {
  kCast,
  kWhere,
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,
  kNot,
  kAnd,
  kOr,
  kXor,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,   ///< integers, the divisor's sign (fmod 0)
  kFmod,  ///< the dividend's sign (fmod 1)
  kMin,
  kMax,
  kNeg,
  kAbs,
  kClip  ///< v[0] held within [v[1], v[2]], the bounds
};

/// An int32 value as two's complement hardware leaves a 64-bit result: its low 32 bits.
double wrap32(std::int64_t v) {
  return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v))));
}

/// True for the functions that divide by their second operand.
bool divides(TypedFn fn) {
  return fn == TypedFn::kDiv || fn == TypedFn::kMod || fn == TypedFn::kFmod;
}

/// Integer arithmetic on int32 values held exactly as doubles (a zero divisor is the caller's to trap); kFmod
/// also of fp16 values, in double, where fmod is exact.
double evaluate_arithmetic(TypedFn fn, const std::array<double, 3>& v) {
  const auto a = static_cast<std::int64_t>(v[0]);
  const auto b = static_cast<std::int64_t>(v[1]);
  switch (fn) {
    case TypedFn::kAdd:
      return wrap32(a + b);
    case TypedFn::kSub:
      return wrap32(a - b);
    case TypedFn::kMul:
      return wrap32(a * b);
    case TypedFn::kDiv:
      return b == 0 ? 0.0 : wrap32(a / b);
    case TypedFn::kMod: {
      if (b == 0) return 0.0;
      const std::int64_t r = a % b;
      return static_cast<double>(r != 0 && (r < 0) != (b < 0) ? r + b : r);
    }
    case TypedFn::kFmod:
      return std::fmod(v[0], v[1]);
    case TypedFn::kMin:
      return static_cast<double>(std::min(a, b));
    case TypedFn::kMax:
      return static_cast<double>(std::max(a, b));
    case TypedFn::kNeg:
      return wrap32(-a);
    case TypedFn::kAbs:
      return wrap32(a < 0 ? -a : a);
    case TypedFn::kClip:
      return std::min(std::max(v[0], v[1]), v[2]);
    default:
      return 0.0;
  }
}

/// The function on element values (as doubles); the result is held as the output's type by store_value.
double evaluate(TypedFn fn, const std::array<double, 3>& v) {
  switch (fn) {
    case TypedFn::kCast:
      return v[0];
    case TypedFn::kWhere:
      return v[0] != 0.0 ? v[1] : v[2];
    case TypedFn::kEqual:
      return v[0] == v[1] ? 1.0 : 0.0;
    case TypedFn::kLess:
      return v[0] < v[1] ? 1.0 : 0.0;
    case TypedFn::kGreater:
      return v[0] > v[1] ? 1.0 : 0.0;
    case TypedFn::kLessOrEqual:
      return v[0] <= v[1] ? 1.0 : 0.0;
    case TypedFn::kGreaterOrEqual:
      return v[0] >= v[1] ? 1.0 : 0.0;
    case TypedFn::kNot:
      return v[0] == 0.0 ? 1.0 : 0.0;
    case TypedFn::kAnd:
      return v[0] != 0.0 && v[1] != 0.0 ? 1.0 : 0.0;
    case TypedFn::kOr:
      return v[0] != 0.0 || v[1] != 0.0 ? 1.0 : 0.0;
    case TypedFn::kXor:
      return (v[0] != 0.0) != (v[1] != 0.0) ? 1.0 : 0.0;
    default:
      return evaluate_arithmetic(fn, v);
  }
  return 0.0;
}

/// A value held as `type`: fp16 rounded, int32 truncated toward zero and saturated (NaN: 0), bool "not zero".
std::int32_t as_word(double v, DType type) {
  if (type == DType::kBool) return v != 0.0 ? 1 : 0;
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  if (t >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (t <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(t);
}

void store_value(f16* units, DType type, std::size_t i, double v) {
  if (type == DType::kF16) {
    units[i] = f16(static_cast<float>(v));
    return;
  }
  const auto u = static_cast<std::uint32_t>(as_word(v, type));
  units[2 * i] = f16::from_bits(static_cast<std::uint16_t>(u & 0xffffu));
  units[2 * i + 1] = f16::from_bits(static_cast<std::uint16_t>(u >> 16));
}

struct TypedOperand {
  DevicePtr<const f16> ptr;
  std::size_t total_units = 0;
  DType type = DType::kF16;
  Shape shape;
  bool broadcast = false;
};

struct TypedArgs {
  TypedFn fn = TypedFn::kCast;
  std::string name;                ///< the op's kind, for a fault's message
  std::string label;               ///< the kernel's label, for a fault's location
  std::array<double, 2> bounds{};  ///< clip's
  std::vector<TypedOperand> in;
  DevicePtr<f16> y;
  DType out_type = DType::kF16;
  Shape out_shape;
  std::size_t out_units_total = 0;  ///< 2-byte units the output's staged layout holds (an odd fp16 count padded)
};

void typed_kernel(Core& core, const TypedArgs& a) {
  const std::size_t out_units = units_of(a.out_type);
  const tiling::Range share = tiling::my_share(core, a.out_shape.elements(), tiling::kStreamingShare / 2);
  if (share.empty()) return;
  std::vector<LdmSpan<f16>> resident(a.in.size());
  for (std::size_t k = 0; k < a.in.size(); ++k) {
    if (!a.in[k].broadcast) continue;
    const std::size_t n = tiling::ceil_even(a.in[k].total_units);
    resident[k] = core.ldm().alloc<f16>(n + 2);
    const tiling::RangeRead r =
        tiling::get_range(core, resident[k], a.in[k].ptr, a.in[k].total_units, tiling::Range{0, a.in[k].total_units});
    core.wait(r.handle);
  }
  // Buffers of 2-byte units: one per streamed input (a tile of its type, +2 for a widened read) and the output.
  std::size_t streamed = 0;
  for (const TypedOperand& op : a.in) streamed += op.broadcast ? 0 : 1;
  const std::size_t tile =
      tiling::floor_even(std::max<std::size_t>(2, tiling::fit_elements(core, 2 * (streamed + 1), 4096, 64)));
  std::vector<LdmSpan<f16>> bufs(a.in.size());
  for (std::size_t k = 0; k < a.in.size(); ++k) {
    if (!a.in[k].broadcast) bufs[k] = core.ldm().alloc<f16>(tile * units_of(a.in[k].type) + 2);
  }
  LdmSpan<f16> yb = core.ldm().alloc<f16>(tile * out_units + 2);
  tiling::for_each_tile(share, tile, [&](tiling::Range t) {
    std::vector<std::span<const f16>> src(a.in.size());
    std::vector<std::optional<BroadcastIndex>> bidx(a.in.size());
    for (std::size_t k = 0; k < a.in.size(); ++k) {
      const std::size_t u = units_of(a.in[k].type);
      if (a.in[k].broadcast) {
        src[k] = std::span<const f16>(resident[k].data(), a.in[k].total_units);
        bidx[k].emplace(a.in[k].shape, a.out_shape, t.begin);
        continue;
      }
      const tiling::RangeRead r =
          tiling::get_range(core, bufs[k], a.in[k].ptr, a.in[k].total_units, tiling::Range{t.begin * u, t.end * u});
      core.wait(r.handle);
      src[k] = std::span<const f16>(bufs[k].data() + r.first, t.size() * u);
    }
    std::array<double, 3> v{0.0, a.bounds[0], a.bounds[1]};
    for (std::size_t i = 0; i < t.size(); ++i) {
      for (std::size_t k = 0; k < a.in.size(); ++k) {
        if (bidx[k]) {
          v[k] = element_value(src[k], a.in[k].type, bidx[k]->index());
          bidx[k]->next();
        } else {
          v[k] = element_value(src[k], a.in[k].type, i);
        }
      }
      if (divides(a.fn) && v[1] == 0.0 && a.in[1].type == DType::kI32) {
        const std::uint64_t element = t.begin + i;
        throw Fault(FaultKind::kDivideByZero, {core.cg(), core.id()}, core.cycle(), a.label,
                    fmt::format("{}: {} (element {} of the output) divided by zero", a.name, v[0], element),
                    FaultField{"element", element});
      }
      store_value(yb.data(), a.out_type, i, evaluate(a.fn, v));
    }
    core.compute({.flops = t.size()});
    // Puts are whole 4-byte words: an fp16 output's odd last element goes with the zero its layout pads it with.
    std::size_t end = t.end * out_units;
    if (end % 2 == 1 && end < a.out_units_total) yb[t.size() * out_units] = f16(0.0f), ++end;
    tiling::put_range(core, a.y, yb, tiling::Range{t.begin * out_units, end}).wait();
  });
}

class TypedElementwiseOp final : public BoundOp {
 public:
  TypedElementwiseOp(TypedFn fn, std::string name, std::vector<Shape> in, const std::vector<DType>& in_types, Shape out,
                     DType out_type, std::array<double, 2> bounds = {})
      : BoundOp(std::move(in), {std::move(out)}), fn_(fn), name_(std::move(name)), bounds_(bounds) {
    std::vector<DType> types = in_types;
    types.push_back(out_type);
    set_dtypes(std::move(types));
  }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const Shape& y = output_shapes()[0];
    DeviceScratch scratch(m);
    // The kernel reads and writes logical elements in order: a tensor staged with padding inside (naive staging)
    // is copied into its 1-D layout first (an input) or after (the output).
    // Views in 2-byte units: a 32-bit element is two.
    const auto in_units = [](const StridedView& v, DType type) {
      return units_of(type) > 1 ? v.widened(units_of(type)) : v;
    };
    const bool out_padded_inside = !out[0].layout().only_tail_padded();
    const PaddingPlan out_plan = plan_one_d(unit_view(y, out_type()));
    const DeviceTensor out_flat = out_padded_inside ? scratch.tensor(label + ":flat_output", out_plan) : out[0];
    TypedArgs a{fn_, name_, label, bounds_, {}, out_flat.ptr, out_type(), y, out_flat.layout().total};
    for (std::size_t k = 0; k < in.size(); ++k) {
      const bool broadcast = !(input_shapes()[k] == y);
      const std::size_t total = in[k].layout().total;
      if (broadcast && total * sizeof(f16) > m.arch().ldm_bytes / 4) {
        // Too large to be resident in every core's ldm: expanded to the output's shape first (a view copy in 2-byte
        // units with stride 0 on the repeated axes, into scratch device memory), then streamed.
        const DType type = dtype(k);
        const StridedView view = in_units(broadcast_view(input_shapes()[k], y), type);
        // The copy reads the input as it is staged and writes whole 4-byte words: an odd fp16 element count gets
        // a zero tail element (the 1-D plan), as staging pads a tensor.
        const PaddingPlan plan = plan_one_d(unit_view(y, type));
        const DeviceTensor expanded = scratch.tensor(fmt::format("{}:expanded{}", label, k), plan);
        run_view_copy(m, fmt::format("{}:expand{}", label, k), view, DevicePtr<const f16>(in[k].ptr), in[k].layout(),
                      expanded.ptr, plan.layout);
        a.in.push_back({DevicePtr<const f16>(expanded.ptr), plan.layout.total, type, y, false});
        continue;
      }
      if (!in[k].layout().only_tail_padded()) {
        const PaddingPlan plan = plan_one_d(unit_view(input_shapes()[k], dtype(k)));
        const DeviceTensor flat = scratch.tensor(fmt::format("{}:flat{}", label, k), plan);
        run_view_copy(m, fmt::format("{}:flat{}", label, k),
                      in_units(broadcast_view(input_shapes()[k], input_shapes()[k]), dtype(k)),
                      DevicePtr<const f16>(in[k].ptr), in[k].layout(), flat.ptr, plan.layout);
        a.in.push_back({DevicePtr<const f16>(flat.ptr), plan.layout.total, dtype(k), input_shapes()[k], broadcast});
        continue;
      }
      a.in.push_back({DevicePtr<const f16>(in[k].ptr), total, dtype(k), input_shapes()[k], broadcast});
    }
    launch_all(m, label, typed_kernel, a);
    if (out_padded_inside) {
      run_view_copy(m, label + ":unflat", in_units(broadcast_view(y, y), out_type()),
                    DevicePtr<const f16>(out_flat.ptr), out_plan.layout, out[0].ptr, out[0].layout());
    }
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& y = output_shapes()[0];
    HostTensor out{y, std::vector<float>(y.elements())};
    std::vector<BroadcastIndex> idx;
    for (std::size_t k = 0; k < in.size(); ++k) idx.emplace_back(input_shapes()[k], y, 0);
    for (std::size_t i = 0; i < out.data.size(); ++i) {
      std::array<double, 3> v{0.0, bounds_[0], bounds_[1]};
      for (std::size_t k = 0; k < in.size(); ++k) {
        v[k] = in[k].data[idx[k].index()];
        idx[k].next();
      }
      if (divides(fn_) && v[1] == 0.0 && dtype(1) == DType::kI32) {
        throw std::domain_error(fmt::format("{} reference: integer division by zero (element {})", name_, i));
      }
      const double r = evaluate(fn_, v);
      out.data[i] = out_type() == DType::kF16 ? static_cast<float>(r) : static_cast<float>(as_word(r, out_type()));
    }
    return {out};
  }
  OpCost cost() const override { return {output_shapes()[0].elements(), 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }

 private:
  DType out_type() const { return dtype(input_shapes().size()); }
  TypedFn fn_;
  std::string name_;
  std::array<double, 2> bounds_;
};

/// The broadcast shape of every input (numpy rules), or a rejection naming the op.
Shape broadcast_all(std::string_view name, std::span<const Shape> in) {
  Shape out = in[0];
  try {
    for (std::size_t k = 1; k < in.size(); ++k) out = broadcast_shapes(out, in[k]);
  } catch (const ConfigError& e) {
    reject(name, e.what());
  }
  return out;
}

/// Rejects input `k` of type `got` when it is not one of `allowed`.
void expect_type(std::string_view name, std::size_t k, DType got, std::initializer_list<DType> allowed,
                 std::string_view role) {
  for (const DType t : allowed) {
    if (t == got) return;
  }
  std::string names;
  for (const DType t : allowed) names += (names.empty() ? "" : " or ") + std::string(to_string(t));
  reject(name, fmt::format("input {} ({}) is {}, expected {}", k, role, to_string(got), names));
}

class TypedKind final : public OperatorKind {
 public:
  TypedKind(std::string name, TypedFn fn, Arity arity, std::vector<std::string> onnx)
      : OperatorKind(OperatorTraits{.onnx_types = std::move(onnx)}), name_(std::move(name)), fn_(fn), arity_(arity) {}
  std::string_view name() const override { return name_; }
  Arity arity() const override { return arity_; }
  std::unique_ptr<BoundOp> bind(const JsonField& attrs, std::span<const Shape> inputs) const override {
    const std::vector<DType> types(inputs.size(), DType::kF16);
    return bind_typed(attrs, inputs, types);
  }
  std::unique_ptr<BoundOp> bind_typed(const JsonField& attrs, std::span<const Shape> in,
                                      std::span<const DType> types) const override {
    check_attrs(attrs, fn_ == TypedFn::kCast  ? std::initializer_list<std::string_view>{"to"}
                       : fn_ == TypedFn::kMod ? std::initializer_list<std::string_view>{"fmod"}
                                              : std::initializer_list<std::string_view>{});
    TypedFn fn = fn_;
    const std::vector<DType> in_types(types.begin(), types.end());
    const Shape out = broadcast_all(name_, in);
    DType out_type = DType::kBool;
    switch (fn_) {
      case TypedFn::kCast: {
        const auto to = attrs.find("to");
        if (!to) reject(name_, "needs attribute 'to' (f16, int32 or bool)");
        try {
          out_type = parse_dtype(to->string());
        } catch (const ConfigError& e) {
          to->fail(e.what());
        }
        break;
      }
      case TypedFn::kWhere:
        expect_type(name_, 0, types[0], {DType::kBool}, "the condition");
        if (types[1] != types[2]) {
          reject(name_, fmt::format("x (input 1) is {} but y (input 2) is {}: they must be of one type",
                                    to_string(types[1]), to_string(types[2])));
        }
        out_type = types[1];
        break;
      case TypedFn::kEqual:
      case TypedFn::kLess:
      case TypedFn::kGreater:
      case TypedFn::kLessOrEqual:
      case TypedFn::kGreaterOrEqual:
        for (std::size_t k = 0; k < 2; ++k) {
          expect_type(name_, k, types[k],
                      fn_ == TypedFn::kEqual ? std::initializer_list<DType>{DType::kF16, DType::kI32, DType::kBool}
                                             : std::initializer_list<DType>{DType::kF16, DType::kI32},
                      "an operand");
        }
        if (types[0] != types[1]) {
          reject(name_,
                 fmt::format("compares {} with {}: cast one of them first", to_string(types[0]), to_string(types[1])));
        }
        break;
      case TypedFn::kNot:
      case TypedFn::kAnd:
      case TypedFn::kOr:
      case TypedFn::kXor:
        for (std::size_t k = 0; k < in.size(); ++k) expect_type(name_, k, types[k], {DType::kBool}, "an operand");
        break;
      case TypedFn::kMod: {
        const bool c_fmod = int_attr(attrs, "fmod", 0, 0, 1) != 0;
        for (std::size_t k = 0; k < 2; ++k) {
          expect_type(name_, k, types[k],
                      c_fmod ? std::initializer_list<DType>{DType::kF16, DType::kI32}
                             : std::initializer_list<DType>{DType::kI32},
                      c_fmod ? "an operand" : "an operand (f16 operands need fmod 1)");
        }
        if (types[0] != types[1]) {
          reject(name_,
                 fmt::format("divides {} by {}: cast one of them first", to_string(types[0]), to_string(types[1])));
        }
        fn = c_fmod ? TypedFn::kFmod : TypedFn::kMod;
        out_type = types[0];
        break;
      }
      default:  // integer arithmetic is bound by integer_elementwise
        break;
    }
    return std::make_unique<TypedElementwiseOp>(fn, name_, std::vector<Shape>(in.begin(), in.end()), in_types, out,
                                                out_type);
  }

 private:
  std::string name_;
  TypedFn fn_;
  Arity arity_;
};

}  // namespace

void add_typed_elementwise_kinds(OperatorRegistry& registry) {
  const auto add = [&](std::string name, TypedFn fn, Arity arity, std::vector<std::string> onnx) {
    registry.add(std::make_unique<TypedKind>(std::move(name), fn, arity, std::move(onnx)));
  };
  add("cast", TypedFn::kCast, Arity{1, 1, 1}, {});
  add("where", TypedFn::kWhere, Arity{3, 3, 1}, {"Where"});
  add("equal", TypedFn::kEqual, Arity{2, 2, 1}, {"Equal"});
  add("less", TypedFn::kLess, Arity{2, 2, 1}, {"Less"});
  add("greater", TypedFn::kGreater, Arity{2, 2, 1}, {"Greater"});
  add("less_or_equal", TypedFn::kLessOrEqual, Arity{2, 2, 1}, {"LessOrEqual"});
  add("greater_or_equal", TypedFn::kGreaterOrEqual, Arity{2, 2, 1}, {"GreaterOrEqual"});
  add("not", TypedFn::kNot, Arity{1, 1, 1}, {"Not"});
  add("and", TypedFn::kAnd, Arity{2, 2, 1}, {"And"});
  add("or", TypedFn::kOr, Arity{2, 2, 1}, {"Or"});
  add("xor", TypedFn::kXor, Arity{2, 2, 1}, {"Xor"});
  add("mod", TypedFn::kMod, Arity{2, 2, 1}, {});
}

std::unique_ptr<BoundOp> integer_elementwise(IntegerFn fn, std::vector<Shape> in, Shape out,
                                             std::array<double, 2> bounds) {
  static constexpr std::array<std::pair<TypedFn, std::string_view>, 9> kForms{{{TypedFn::kAdd, "add"},
                                                                               {TypedFn::kSub, "sub"},
                                                                               {TypedFn::kMul, "mul"},
                                                                               {TypedFn::kDiv, "div"},
                                                                               {TypedFn::kMin, "min"},
                                                                               {TypedFn::kMax, "max"},
                                                                               {TypedFn::kNeg, "neg"},
                                                                               {TypedFn::kAbs, "abs"},
                                                                               {TypedFn::kClip, "clip"}}};
  const auto& [typed, name] = kForms.at(static_cast<std::size_t>(fn));
  const std::vector<DType> types(in.size(), DType::kI32);
  return std::make_unique<TypedElementwiseOp>(typed, std::string(name), std::move(in), types, std::move(out),
                                              DType::kI32, bounds);
}

}  // namespace ldmsim::ops
