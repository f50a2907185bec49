// Constant folding of ONNX shape computations on the control core (see onnx_nodes.hpp, docs/onnx.md). PyTorch
// exports compute reshape targets and initial states at run time from Shape(x): int64 tensors the fp16 device
// graph has no place for. With every shape known at import, those subgraphs fold to constants here and no op
// ever runs for them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "ldmsim/kernels/slice_axis.hpp"
#include "ldmsim/sim/fp16.hpp"
#include "onnx_nodes.hpp"
#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {
namespace {

using Dims = std::vector<std::uint64_t>;

/// Element count of `dims`, or nullopt when it exceeds kMaxFoldedElements.
std::optional<std::uint64_t> foldable_count(const Dims& dims) {
  std::uint64_t count = 1;
  for (const std::uint64_t d : dims) {
    if (d != 0 && count > kMaxFoldedElements / d) return std::nullopt;
    count *= d;
  }
  if (count > kMaxFoldedElements) return std::nullopt;
  return count;
}

bool check_size(NodeTranslator& t, const Dims& dims) {
  if (foldable_count(dims)) return true;
  t.problem(fmt::format("would fold to a constant of shape [{}], more than {} elements", fmt::join(dims, ", "),
                        kMaxFoldedElements));
  return false;
}

/// Row-major strides of `dims`, with 0 for broadcast dimensions of size 1 when aligned to `out`.
std::vector<std::uint64_t> broadcast_strides(const Dims& dims, const Dims& out) {
  std::vector<std::uint64_t> strides(out.size(), 0);
  std::uint64_t stride = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::size_t i = dims.size() - 1 - k;
    const std::size_t o = out.size() - 1 - k;
    strides[o] = dims[i] == 1 ? 0 : stride;
    stride *= dims[i];
  }
  return strides;
}

/// Numpy broadcasting of two shapes, or nullopt when they do not broadcast.
std::optional<Dims> broadcast_shape(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::uint64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    const std::uint64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[out.size() - 1 - k] = da == 1 ? db : da;
  }
  return out;
}

/// out[i] = f(a[ia], b[ib]) over the broadcast shape `dims` (sizes checked by the caller).
Constant broadcast_map(const Constant& a, const Constant& b, const Dims& dims,
                       const std::function<double(double, double)>& f) {
  Constant out;
  out.dims = dims;
  out.integer = a.integer && b.integer;
  out.boolean = a.boolean && b.boolean;
  const auto sa = broadcast_strides(a.dims, dims);
  const auto sb = broadcast_strides(b.dims, dims);
  const std::uint64_t count = *foldable_count(dims);
  out.values.resize(count);
  std::vector<std::uint64_t> index(dims.size(), 0);
  for (std::uint64_t n = 0; n < count; ++n) {
    std::uint64_t ia = 0, ib = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) ia += index[k] * sa[k], ib += index[k] * sb[k];
    out.values[n] = f(a.values[ia], b.values[ib]);
    for (std::size_t k = dims.size(); k-- > 0;) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

/// The int64 list of a constant (shape, axes), or nullopt with a problem.
std::optional<std::vector<std::int64_t>> integer_list(NodeTranslator& t, int i, const std::string& role) {
  const Constant* c = t.constant_input(i, role);
  if (c == nullptr) return std::nullopt;
  if (c->dims.size() > 1) {
    t.problem(fmt::format("the {} must be a scalar or 1-D", role));
    return std::nullopt;
  }
  if (!c->integer) {
    t.problem(fmt::format("the {} must be an integer tensor", role));
    return std::nullopt;
  }
  std::vector<std::int64_t> list;
  for (const double v : c->values) {
    const auto n = exact_integer(v);
    if (!n) {
      t.problem(fmt::format("the {} holds {}, not a usable integer", role, v));
      return std::nullopt;
    }
    list.push_back(*n);
  }
  return list;
}

/// A shape given as int64 values, or nullopt (with a problem) when one is negative.
std::optional<Dims> dims_of(NodeTranslator& t, const std::vector<std::int64_t>& shape) {
  Dims dims;
  for (const std::int64_t d : shape) {
    if (d < 0) {
      t.problem(fmt::format("shape [{}] has a negative dimension", fmt::join(shape, ", ")));
      return std::nullopt;
    }
    dims.push_back(static_cast<std::uint64_t>(d));
  }
  return dims;
}

void fold_shape(NodeTranslator& t, const Context& ctx) {
  const Attributes a(t.node(), t.problems(), {"start", "end"});
  if (!t.arity(1, 1, 1)) return;
  const auto it = ctx.shapes.find(t.input(0));
  if (it == ctx.shapes.end()) {
    t.problem(fmt::format("the shape of '{}' is not known at import (give every graph input a static shape)",
                          t.node().input(0)));
    return;
  }
  const auto rank = static_cast<std::int64_t>(it->second.size());
  const auto clamp = [rank](std::int64_t v) { return std::clamp(v < 0 ? v + rank : v, std::int64_t{0}, rank); };
  const std::int64_t start = clamp(a.integer("start", 0));
  const std::int64_t end = clamp(a.integer("end", rank));
  Constant c;
  c.integer = true;
  for (std::int64_t k = start; k < end; ++k)
    c.values.push_back(static_cast<double>(it->second[static_cast<std::size_t>(k)]));
  c.dims = {c.values.size()};
  t.define(std::move(c));
}

void fold_gather(NodeTranslator& t) {
  if (t.has_input(1) && t.known(1) == nullptr) {  // runtime indices (token ids): a gather op, whatever the data
    const Attributes a(t.node(), t.problems(), {"axis"});
    if (t.arity(2, 2, 1)) t.op("gather", {0, 1}, {{"axis", a.integer("axis", 0)}});
    return;
  }
  const Constant* data = t.known(0);
  if (data == nullptr) {  // a runtime tensor: slices of it
    translate_gather_view(t.node(), t);
    return;
  }
  const Attributes a(t.node(), t.problems(), {"axis"});
  if (!t.arity(2, 2, 1)) return;
  const Constant* indices = t.constant_input(1, "indices");
  if (indices == nullptr) return;
  const auto axis = normalize_axis(a.integer("axis", 0), data->dims.size());
  if (!axis) {
    t.problem(fmt::format("axis {} is out of range for rank {}", a.integer("axis", 0), data->dims.size()));
    return;
  }
  const std::uint64_t extent = data->dims[*axis];
  Dims dims(data->dims.begin(), data->dims.begin() + static_cast<std::ptrdiff_t>(*axis));
  dims.insert(dims.end(), indices->dims.begin(), indices->dims.end());
  dims.insert(dims.end(), data->dims.begin() + static_cast<std::ptrdiff_t>(*axis) + 1, data->dims.end());
  if (!check_size(t, dims)) return;
  std::uint64_t outer = 1, inner = 1;
  for (std::size_t k = 0; k < *axis; ++k) outer *= data->dims[k];
  for (std::size_t k = *axis + 1; k < data->dims.size(); ++k) inner *= data->dims[k];
  Constant c;
  c.dims = dims;
  c.integer = data->integer;
  c.boolean = data->boolean;
  for (std::uint64_t o = 0; o < outer; ++o) {
    for (const double raw : indices->values) {
      const auto exact = exact_integer(raw);
      if (!indices->integer || !exact) {
        t.problem(fmt::format("index {} is not an integer", raw));
        return;
      }
      std::int64_t index = *exact;
      if (index < 0) index += static_cast<std::int64_t>(extent);
      if (index < 0 || static_cast<std::uint64_t>(index) >= extent) {
        t.problem(fmt::format("index {} is out of range for a dimension of {}", raw, extent));
        return;
      }
      const std::uint64_t base = (o * extent + static_cast<std::uint64_t>(index)) * inner;
      c.values.insert(c.values.end(), data->values.begin() + static_cast<std::ptrdiff_t>(base),
                      data->values.begin() + static_cast<std::ptrdiff_t>(base + inner));
    }
  }
  t.define(std::move(c));
}

/// The axes of Unsqueeze/Squeeze: an attribute before opset 13, an input from 13 on; nullopt when absent.
std::optional<std::vector<std::int64_t>> squeeze_axes(NodeTranslator& t, const Attributes& a, bool required) {
  if (t.context().opset < 13) {
    if (!a.has("axes")) {
      if (required) t.problem("attribute 'axes' is required");
      return std::nullopt;
    }
    return a.integers("axes", {});
  }
  if (!t.has_input(1)) {
    if (required) t.problem("input 1 (axes) is required");
    return std::nullopt;
  }
  return integer_list(t, 1, "axes");
}

/// Unsqueeze and Squeeze only change dims: a constant keeps its values under the new dims, a runtime tensor
/// becomes a reshape (no data movement).
void fold_squeeze(NodeTranslator& t, bool unsqueeze) {
  const Attributes a(t.node(), t.problems(),
                     t.context().opset < 13 ? std::set<std::string>{"axes"} : std::set<std::string>{});
  if (!t.arity(1, t.context().opset < 13 ? 1 : 2, 1)) return;
  const auto axes = squeeze_axes(t, a, unsqueeze);
  if (!t.problems().empty()) return;
  const Constant* value = t.known(0);
  const auto shape = t.context().shapes.find(t.input(0));
  if (value == nullptr && shape == t.context().shapes.end()) {
    t.problem(fmt::format("the shape of '{}' is not known at import", t.node().input(0)));
    return;
  }
  const Dims in = value != nullptr ? value->dims : shape->second;
  Dims out;
  if (unsqueeze) {
    const std::size_t rank = in.size() + axes->size();
    std::vector<bool> inserted(rank, false);
    for (const std::int64_t axis : *axes) {
      const auto k = normalize_axis(axis, rank);
      if (!k || inserted[*k]) {
        t.problem(fmt::format("axes [{}] are out of range or repeated for rank {}", fmt::join(*axes, ", "), rank));
        return;
      }
      inserted[*k] = true;
    }
    for (std::size_t k = 0, next = 0; k < rank; ++k) out.push_back(inserted[k] ? 1 : in[next++]);
  } else {
    std::vector<bool> removed(in.size(), !axes);
    if (!axes) {
      for (std::size_t k = 0; k < in.size(); ++k) removed[k] = in[k] == 1;
    }
    for (const std::int64_t axis : axes.value_or(std::vector<std::int64_t>{})) {
      const auto k = normalize_axis(axis, in.size());
      if (!k || in[*k] != 1) {
        t.problem(fmt::format("axis {} is out of range or not of size 1 in [{}]", axis, fmt::join(in, ", ")));
        return;
      }
      removed[*k] = true;
    }
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (!removed[k]) out.push_back(in[k]);
    }
  }
  if (value != nullptr) {
    Constant c = *value;
    c.dims = out;
    t.define(std::move(c));
    return;
  }
  t.context().shapes[t.node().output(0)] = out;
  t.op("reshape", {0}, {{"shape", out}});
}

void fold_concat(NodeTranslator& t, const Attributes& a) {
  if (!a.has("axis")) {
    t.problem("attribute 'axis' is required");
    return;
  }
  std::vector<const Constant*> parts;  // looked up once: a Concat may have thousands of inputs
  for (int i = 0; i < t.node().input_size(); ++i) parts.push_back(t.known(i));
  const Constant& first = *parts[0];
  const auto axis = normalize_axis(a.integer("axis", 0), first.dims.size());
  if (!axis) {
    t.problem(fmt::format("axis {} is out of range for rank {}", a.integer("axis", 0), first.dims.size()));
    return;
  }
  Dims dims = first.dims;
  dims[*axis] = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Constant& part = *parts[i];
    Dims expect = dims;
    expect[*axis] = part.dims.size() == dims.size() ? part.dims[*axis] : 0;
    if (part.dims != expect || part.dims[*axis] > kMaxFoldedElements) {
      t.problem(fmt::format("input {} has shape [{}], which does not concatenate with [{}] on axis {}", i,
                            fmt::join(part.dims, ", "), fmt::join(first.dims, ", "), *axis));
      return;
    }
    dims[*axis] += part.dims[*axis];  // at most 2^16 inputs of at most 2^24 each: no overflow
  }
  const auto count = foldable_count(dims);
  if (!count) {
    check_size(t, dims);
    return;
  }
  Constant c;
  c.dims = dims;
  c.integer = std::all_of(parts.begin(), parts.end(), [](const Constant* p) { return p->integer; });
  c.boolean = std::all_of(parts.begin(), parts.end(), [](const Constant* p) { return p->boolean; });
  std::uint64_t outer = 1;
  for (std::size_t k = 0; k < *axis; ++k) outer *= dims[k];
  if (*count == 0) {  // nothing to copy, however many (empty) rows and inputs there are
    t.define(std::move(c));
    return;
  }
  // Every row holds at least one element, so outer <= count; the row-by-input walk is bounded too.
  if (outer * parts.size() > kMaxFoldedElements) {
    t.problem(fmt::format("concatenating {} inputs over {} rows is too much to fold", parts.size(), outer));
    return;
  }
  c.values.reserve(*count);
  for (std::uint64_t o = 0; o < outer; ++o) {
    for (const Constant* part : parts) {
      const std::uint64_t block = part->values.size() / outer;
      c.values.insert(c.values.end(), part->values.begin() + static_cast<std::ptrdiff_t>(o * block),
                      part->values.begin() + static_cast<std::ptrdiff_t>((o + 1) * block));
    }
  }
  t.define(std::move(c));
}

void fold_expand(NodeTranslator& t) {
  const Constant* data = t.known(0);
  if (data == nullptr) {  // a runtime tensor: an expand op
    translate_expand_view(t.node(), t);
    return;
  }
  const Attributes a(t.node(), t.problems(), {});
  if (!t.arity(2, 2, 1)) return;
  const auto shape = integer_list(t, 1, "shape");
  if (!shape) return;
  const auto target = dims_of(t, *shape);
  if (!target) return;
  if (target->size() > kMaxConstantRank) {
    t.problem(fmt::format("shape has {} dimensions (at most {})", target->size(), kMaxConstantRank));
    return;
  }
  const auto dims = broadcast_shape(data->dims, *target);
  if (!dims) {
    t.problem(fmt::format("[{}] does not broadcast to [{}]", fmt::join(data->dims, ", "), fmt::join(*target, ", ")));
    return;
  }
  if (!check_size(t, *dims)) return;
  Constant ones;
  ones.integer = true;
  ones.boolean = true;
  ones.values = {1};
  t.define(broadcast_map(*data, ones, *dims, [](double x, double) { return x; }));
}

/// Cast of a constant converts its values; of a runtime tensor to a float type it is the identity (the device
/// holds fp16 whatever the model's float type).
void fold_cast(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {"to", "saturate"});
  if (!t.arity(1, 1, 1)) return;
  using DT = onnx::TensorProto;
  const std::int64_t to = a.integer("to", DT::UNDEFINED);
  const bool to_float = to == DT::FLOAT || to == DT::FLOAT16 || to == DT::DOUBLE;
  const bool to_integer = to == DT::INT32 || to == DT::INT64;
  const bool to_bool = to == DT::BOOL;
  if (!to_float && !to_integer && !to_bool) {
    t.problem(fmt::format("cast to {} is not supported (float, float16, double, int32, int64, bool)",
                          DT::DataType_Name(static_cast<DT::DataType>(to))));
    return;
  }
  const Constant* value = t.known(0);
  if (value == nullptr) {  // the device holds every float type as fp16 and every integer type as int32
    const DType want = to_bool ? DType::kBool : to_integer ? DType::kI32 : DType::kF16;
    if (tensor_dtype(t.context(), t.input(0)) == want) {
      t.context().aliases[t.node().output(0)] = t.input(0);
    } else {
      t.op("cast", {0}, {{"to", std::string(to_string(want))}});
    }
    return;
  }
  Constant c = *value;
  c.integer = to_integer || to_bool;
  c.boolean = to_bool;
  for (double& v : c.values) {
    if (to_bool) {
      v = v != 0 ? 1 : 0;  // NaN is true, as in numpy
    } else if (to_integer && !value->integer) {
      // A float truncates; NaN, an infinity or a value beyond the type's range gives x86's "integer indefinite"
      // (the type's lowest value), as PyTorch and ONNX Runtime get there.
      const double whole = std::trunc(v);
      const bool int32 = to == DT::INT32;
      const double lowest = int32 ? static_cast<double>(std::numeric_limits<std::int32_t>::min())
                                  : static_cast<double>(std::numeric_limits<std::int64_t>::min());
      const double beyond = int32 ? 2147483648.0 : 9223372036854775808.0;  // 2^31, 2^63
      v = std::isfinite(whole) && whole >= lowest && whole < beyond ? whole : lowest;
    } else if (to_integer) {  // an integer wraps to int32 as numpy's astype does
      const auto n = exact_integer(v);
      if (!n) {
        t.problem(fmt::format("cannot cast {} to an integer", v));
        return;
      }
      v = static_cast<double>(to == DT::INT32 ? static_cast<std::int64_t>(static_cast<std::int32_t>(*n & 0xFFFFFFFF))
                                              : *n);
    } else if (to == DT::FLOAT) {
      v = static_cast<float>(v);
    } else if (to == DT::FLOAT16) {
      v = static_cast<float>(f16(static_cast<float>(v)));
    }
  }
  t.define(std::move(c));
}

void fold_constant_of_shape(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {"value"});
  if (!t.arity(1, 1, 1)) return;
  const auto shape = integer_list(t, 0, "shape");
  if (!shape) return;
  Constant fill;
  fill.values = {0.0};
  if (const auto* value = a.find("value")) {
    std::string problem;
    const auto read = value->type() == onnx::AttributeProto::TENSOR ? read_tensor(value->t(), problem) : std::nullopt;
    if (!read || read->values.size() != 1) {
      t.problem(fmt::format("value {}", problem.empty() ? "must be a one-element tensor" : problem));
      return;
    }
    fill = *read;
  }
  const auto dims = dims_of(t, *shape);
  if (!dims || !check_size(t, *dims)) return;
  if (dims->size() > kMaxConstantRank) {
    t.problem(fmt::format("shape has {} dimensions (at most {})", dims->size(), kMaxConstantRank));
    return;
  }
  Constant c;
  c.dims = *dims;
  c.integer = fill.integer;
  c.boolean = fill.boolean;
  c.values.assign(*foldable_count(*dims), fill.values[0]);
  t.define(std::move(c));
}

/// EyeLike (torch.eye(n) of a size read from a tensor) depends only on its input's shape: a constant with ones on
/// diagonal k, of the dtype attribute's type or else the input's.
void fold_eye_like(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {"dtype", "k"});
  if (!t.arity(1, 1, 1)) return;
  const auto* shape = t.input_shape(0);
  if (shape == nullptr) return;
  if (shape->size() != 2) {
    t.problem(fmt::format("input [{}] must be 2-D", fmt::join(*shape, ", ")));
    return;
  }
  if (!check_size(t, *shape)) return;
  using DT = onnx::TensorProto;
  Constant c;
  c.dims = *shape;
  if (a.has("dtype")) {
    const std::int64_t to = a.integer("dtype", DT::FLOAT);
    if (to != DT::FLOAT && to != DT::FLOAT16 && to != DT::DOUBLE && to != DT::INT32 && to != DT::INT64 &&
        to != DT::BOOL) {
      t.problem(fmt::format("dtype {} is not supported (float, float16, double, int32, int64, bool)",
                            DT::DataType_Name(static_cast<DT::DataType>(to))));
      return;
    }
    hold_as(c, to == DT::BOOL ? DType::kBool : to == DT::INT32 || to == DT::INT64 ? DType::kI32 : DType::kF16);
  } else {
    hold_as(c, tensor_dtype(t.context(), t.input(0)));
  }
  const std::int64_t k = a.integer("k", 0);
  const std::uint64_t rows = (*shape)[0], cols = (*shape)[1];
  c.values.assign(rows * cols, 0.0);
  const auto r = static_cast<std::int64_t>(rows), n = static_cast<std::int64_t>(cols);  // at most 2^24 each
  if (k > -r && k < n) {  // else the diagonal misses the matrix (and i + k below cannot overflow)
    for (std::int64_t i = std::max<std::int64_t>(0, -k); i < r && i + k < n; ++i) {
      c.values[static_cast<std::size_t>(i * n + i + k)] = 1.0;
    }
  }
  t.define(std::move(c));
}

void fold_range(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {});
  if (!t.arity(3, 3, 1)) return;
  const Constant* start = t.constant_input(0, "start");
  const Constant* limit = t.constant_input(1, "limit");
  const Constant* delta = t.constant_input(2, "delta");
  if (start == nullptr || limit == nullptr || delta == nullptr) return;
  if (start->values.size() != 1 || limit->values.size() != 1 || delta->values.size() != 1 || delta->values[0] == 0) {
    t.problem("start, limit and delta must be scalars, delta not 0");
    return;
  }
  const double steps = std::ceil((limit->values[0] - start->values[0]) / delta->values[0]);
  if (!(steps < static_cast<double>(kMaxFoldedElements))) {
    t.problem(fmt::format("would fold to more than {} elements", kMaxFoldedElements));
    return;
  }
  Constant c;
  c.integer = start->integer && limit->integer && delta->integer;
  for (double k = 0; k < steps; ++k) c.values.push_back(start->values[0] + k * delta->values[0]);
  c.dims = {c.values.size()};
  t.define(std::move(c));
}

/// The broadcast shape of two constants a fold combines, or nullopt with a problem (no broadcast, too large).
std::optional<Dims> combined_dims(NodeTranslator& t, const Constant& x, const Constant& y) {
  const auto dims = broadcast_shape(x.dims, y.dims);
  if (!dims) {
    t.problem(fmt::format("[{}] and [{}] do not broadcast", fmt::join(x.dims, ", "), fmt::join(y.dims, ", ")));
    return std::nullopt;
  }
  if (!check_size(t, *dims)) return std::nullopt;
  return dims;
}

/// Add, Sub, Mul, Div and Mod of constants. Mod follows ONNX: with fmod 0 (integers only) the result takes the
/// divisor's sign, as Python's %; with fmod 1 the dividend's, as C's fmod.
void fold_arithmetic(NodeTranslator& t, const std::string& type, bool c_fmod) {
  const Constant& x = *t.known(0);
  const Constant& y = *t.known(1);
  const auto dims = combined_dims(t, x, y);
  if (!dims) return;
  const bool integer = x.integer && y.integer;
  if ((type == "Div" || type == "Mod") && integer &&
      std::find(y.values.begin(), y.values.end(), 0.0) != y.values.end()) {
    t.problem(type == "Div" ? "integer division by zero" : "integer modulo by zero");
    return;
  }
  if (type == "Mod" && !integer && !c_fmod) {
    t.problem("Mod of floats needs fmod 1");
    return;
  }
  using Fn = std::function<double(double, double)>;
  const Fn f = type == "Add"   ? Fn([](double p, double q) { return p + q; })
               : type == "Sub" ? Fn([](double p, double q) { return p - q; })
               : type == "Mul" ? Fn([](double p, double q) { return p * q; })
               : type == "Mod" ? Fn([c_fmod](double p, double q) {
                   const double r = std::fmod(p, q);
                   return !c_fmod && r != 0 && (r < 0) != (q < 0) ? r + q : r;
                 })
                               : Fn([integer](double p, double q) { return integer ? std::trunc(p / q) : p / q; });
  t.define(broadcast_map(x, y, *dims, f));
}

/// Pow and Sqrt of constants (a transformer's scale 1 / sqrt(head dim) written as `d ** 0.5`), in double as the other
/// folds compute. The result has the base's type (ONNX): an integer base takes whole non-negative exponents only.
void fold_power(NodeTranslator& t, const std::string& type) {
  const Constant& x = *t.known(0);
  if (type == "Sqrt") {
    if (x.integer) {
      t.problem("Sqrt of an integer tensor (ONNX defines it for floats only)");
      return;
    }
    if (!check_size(t, x.dims)) return;
    Constant out = x;
    for (double& v : out.values) v = std::sqrt(v);
    out.source = nullptr, out.streamed = nullptr;
    t.define(std::move(out));
    return;
  }
  const Constant& y = *t.known(1);
  const auto dims = combined_dims(t, x, y);
  if (!dims) return;
  if (x.integer &&
      std::any_of(y.values.begin(), y.values.end(), [](double q) { return q < 0 || q != std::trunc(q); })) {
    t.problem("Pow of an integer base needs whole non-negative exponents");
    return;
  }
  Constant out = broadcast_map(x, y, *dims, [](double p, double q) { return std::pow(p, q); });
  out.integer = x.integer, out.boolean = false;
  if (x.integer && std::any_of(out.values.begin(), out.values.end(), [](double v) { return std::abs(v) > 0x1p53; })) {
    t.problem("Pow of integers overflows what the import holds exactly (2^53)");
    return;
  }
  t.define(std::move(out));
}

/// ScatterND of constants (Swin's shifted-window mask, built by assigning regions of a zero tensor): data with the
/// slices that `indices` name replaced by `updates` (reduction "none", the only one before opset 16's).
void fold_scatter_nd(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {"reduction"});
  if (!t.arity(3, 3, 1)) return;
  if (a.text("reduction", "none") != "none") {
    t.problem("reduction other than none is not supported");
    return;
  }
  const Constant& data = *t.known(0);
  const Constant& indices = *t.known(1);
  const Constant& updates = *t.known(2);
  const std::size_t k = indices.dims.empty() ? 0 : static_cast<std::size_t>(indices.dims.back());
  if (indices.dims.empty() || k == 0 || k > data.dims.size() || !indices.integer) {
    t.problem("indices must be an integer tensor whose last dimension is 1 to the data's rank");
    return;
  }
  std::uint64_t slice = 1;  // elements each index tuple replaces
  for (std::size_t d = k; d < data.dims.size(); ++d) slice *= data.dims[d];
  const std::uint64_t tuples = indices.values.size() / k;
  if (updates.values.size() != tuples * slice) {
    t.problem(fmt::format("updates hold {} values, {} index tuples of {} need {}", updates.values.size(), tuples, slice,
                          tuples * slice));
    return;
  }
  Constant c = data;
  for (std::uint64_t i = 0; i < tuples; ++i) {
    std::uint64_t at = 0;
    for (std::size_t d = 0; d < k; ++d) {
      const auto extent = static_cast<std::int64_t>(data.dims[d]);
      auto index = static_cast<std::int64_t>(indices.values[i * k + d]);
      if (index < 0) index += extent;
      if (index < 0 || index >= extent) {
        t.problem(fmt::format("index {} is out of range for a dimension of {}", indices.values[i * k + d], extent));
        return;
      }
      at = at * data.dims[d] + static_cast<std::uint64_t>(index);
    }
    std::copy_n(updates.values.begin() + static_cast<std::ptrdiff_t>(i * slice), slice,
                c.values.begin() + static_cast<std::ptrdiff_t>(at * slice));
  }
  t.define(std::move(c));
}

/// Transpose of a constant (Swin's pads are computed as a [rank, 2] matrix turned into ONNX's order).
void fold_transpose(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {"perm"});
  if (!t.arity(1, 1, 1)) return;
  const Constant& data = *t.known(0);
  const std::size_t rank = data.dims.size();
  std::vector<std::int64_t> perm = a.integers("perm", {});
  if (perm.empty()) {
    for (std::size_t d = rank; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  std::vector<bool> seen(rank, false);
  for (const std::int64_t p : perm) {
    if (perm.size() != rank || p < 0 || p >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(p)]) {
      t.problem(fmt::format("perm [{}] is not a permutation of rank {}", fmt::join(perm, ", "), rank));
      return;
    }
    seen[static_cast<std::size_t>(p)] = true;
  }
  std::vector<std::uint64_t> strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * data.dims[d];
  Constant c;
  c.integer = data.integer;
  c.boolean = data.boolean;
  for (const std::int64_t p : perm) c.dims.push_back(data.dims[static_cast<std::size_t>(p)]);
  c.values.reserve(data.values.size());
  std::vector<std::uint64_t> index(rank, 0);
  for (std::size_t n = 0; n < data.values.size(); ++n) {
    std::uint64_t at = 0;
    for (std::size_t d = 0; d < rank; ++d) at += index[d] * strides[static_cast<std::size_t>(perm[d])];
    c.values.push_back(data.values[at]);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < c.dims[d]) break;
      index[d] = 0;
    }
  }
  t.define(std::move(c));
}

/// Reshape of a constant (a mask or a shape tensor reshaped): the same values under the new dims.
void fold_reshape(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {"allowzero"});
  if (!t.arity(2, 2, 1)) return;
  const Constant& data = *t.known(0);
  const auto shape = integer_list(t, 1, "shape");
  if (!shape) return;
  const bool allowzero = a.integer("allowzero", 0) != 0;
  Dims dims;
  std::optional<std::size_t> inferred;
  std::uint64_t known = 1, count = 1;
  for (const std::uint64_t d : data.dims) count *= d;  // checked when the constant was read or folded
  for (std::size_t i = 0; i < shape->size(); ++i) {
    const std::int64_t d = (*shape)[i];
    if (d == -1 && !inferred) {
      inferred = i;
      dims.push_back(1);
      continue;
    }
    if (d < 0 || (d == 0 && !allowzero && i >= data.dims.size())) {
      t.problem(fmt::format("shape [{}] is not a valid target for [{}]", fmt::join(*shape, ", "),
                            fmt::join(data.dims, ", ")));
      return;
    }
    dims.push_back(d == 0 && !allowzero ? data.dims[i] : static_cast<std::uint64_t>(d));
    if (dims.back() != 0 && known > kMaxFoldedElements / dims.back()) known = kMaxFoldedElements + 1;
    known *= dims.back();
  }
  if (inferred) {
    if (known == 0 || count % known != 0) {
      t.problem(fmt::format("cannot infer the -1 of [{}] for {} values", fmt::join(*shape, ", "), count));
      return;
    }
    dims[*inferred] = count / known;
  } else if (known != count) {
    t.problem(fmt::format("shape [{}] holds {} values, the constant {}", fmt::join(*shape, ", "), known, count));
    return;
  }
  Constant c = data;
  c.dims = dims;
  t.define(std::move(c));
}

/// Slice of a constant (a shape's tail, a part of a shape), with ONNX's clamping of starts and ends.
void fold_slice(NodeTranslator& t) {
  const Attributes a(t.node(), t.problems(), {});
  if (!t.arity(3, 5, 1)) return;
  const Constant& data = *t.known(0);
  const std::size_t rank = data.dims.size();
  std::vector<std::vector<std::int64_t>> lists(5);
  for (int i = 1; i <= 4; ++i) {
    if (!t.has_input(i)) continue;
    const char* roles[] = {"", "starts", "ends", "axes", "steps"};
    const Constant* c = t.constant_input(i, roles[i]);
    if (c == nullptr) return;
    if (!c->integer || c->dims.size() > 1) {
      t.problem(fmt::format("the {} must be a scalar or 1-D integer tensor", roles[i]));
      return;
    }
    for (const double v : c->values) lists[static_cast<std::size_t>(i)].push_back(saturated_integer(v));
  }
  const auto& starts = lists[1];
  if (lists[2].size() != starts.size() || (t.has_input(3) && lists[3].size() != starts.size()) ||
      (t.has_input(4) && lists[4].size() != starts.size())) {
    t.problem("starts, ends, axes and steps must have one entry each per sliced axis");
    return;
  }
  // Per axis: first index, step and count.
  std::vector<std::int64_t> first(rank, 0), step(rank, 1);
  Dims dims = data.dims;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto axis = normalize_axis(t.has_input(3) ? lists[3][i] : static_cast<std::int64_t>(i), rank);
    const std::int64_t s = t.has_input(4) ? lists[4][i] : 1;
    if (!axis || s == 0) {
      t.problem("an axis is out of range or a step is 0");
      return;
    }
    const SliceAxis taken = slice_axis(starts[i], lists[2][i], s, data.dims[*axis]);
    dims[*axis] = taken.count;
    first[*axis] = taken.first;
    step[*axis] = taken.step;
  }
  const auto count = foldable_count(dims);
  if (!count) return void(check_size(t, dims));
  std::vector<std::uint64_t> strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * data.dims[d];
  Constant c;
  c.dims = dims;
  c.integer = data.integer;
  c.boolean = data.boolean;
  c.values.reserve(*count);
  std::vector<std::uint64_t> index(rank, 0);
  for (std::uint64_t n = 0; n < *count; ++n) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      at += (first[d] + static_cast<std::int64_t>(index[d]) * step[d]) * static_cast<std::int64_t>(strides[d]);
    }
    c.values.push_back(data.values[static_cast<std::size_t>(at)]);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  t.define(std::move(c));
}

/// Equal, Less, Greater, And, Or of constants (0 or 1, an integer constant), Not, and Where(condition, x, y).
void fold_logic(NodeTranslator& t, const std::string& type) {
  const Attributes a(t.node(), t.problems(), {});
  if (type == "Not") {
    if (!t.arity(1, 1, 1)) return;
    Constant c = *t.known(0);
    for (double& v : c.values) v = v == 0 ? 1 : 0;
    c.integer = true;
    c.boolean = true;
    t.define(std::move(c));
    return;
  }
  if (type == "Where") {
    if (!t.arity(3, 3, 1)) return;
    const Constant& cond = *t.known(0);
    const Constant& x = *t.known(1);
    const Constant& y = *t.known(2);
    const auto xy = broadcast_shape(x.dims, y.dims);
    const auto dims = xy ? broadcast_shape(cond.dims, *xy) : std::nullopt;
    if (!dims) {
      t.problem("condition, x and y do not broadcast");
      return;
    }
    if (!check_size(t, *dims)) return;
    // Pick x where the condition holds: x where cond, then y where not (both broadcast to the result).
    const Constant chosen_x = broadcast_map(cond, x, *dims, [](double c, double v) { return c != 0 ? v : 0; });
    Constant mask = broadcast_map(cond, y, *dims, [](double c, double) { return c != 0 ? 1 : 0; });
    Constant out = broadcast_map(mask, y, *dims, [](double m, double v) { return m != 0 ? 0 : v; });
    for (std::size_t i = 0; i < out.values.size(); ++i) out.values[i] += chosen_x.values[i];
    out.integer = x.integer && y.integer;
    out.boolean = x.boolean && y.boolean;
    t.define(std::move(out));
    return;
  }
  if (!t.arity(2, 2, 1)) return;
  const Constant& x = *t.known(0);
  const Constant& y = *t.known(1);
  const auto dims = combined_dims(t, x, y);
  if (!dims) return;
  const std::function<double(double, double)> f =
      type == "Equal"     ? std::function<double(double, double)>([](double p, double q) { return p == q ? 1 : 0; })
      : type == "Less"    ? std::function<double(double, double)>([](double p, double q) { return p < q ? 1 : 0; })
      : type == "Greater" ? std::function<double(double, double)>([](double p, double q) { return p > q ? 1 : 0; })
      : type == "And"     ? std::function<double(double, double)>([](double p, double q) { return p != 0 && q != 0; })
                          : std::function<double(double, double)>([](double p, double q) { return p != 0 || q != 0; });
  Constant c = broadcast_map(x, y, *dims, f);
  c.integer = true;
  c.boolean = true;
  t.define(std::move(c));
}

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd of a constant (PyTorch's var and std reduce a
/// shape's dims to the element count this way), in double.
void fold_reduce(NodeTranslator& t, const std::string& type) {
  const bool axes_input = type == "ReduceSum" && t.context().opset >= 13;
  const Attributes a(t.node(), t.problems(),
                     axes_input ? std::set<std::string>{"keepdims", "noop_with_empty_axes"}
                                : std::set<std::string>{"axes", "keepdims"});
  if (!t.arity(1, axes_input ? 2 : 1, 1)) return;
  const Constant& data = *t.known(0);
  const std::size_t rank = data.dims.size();
  std::vector<std::int64_t> axes = axes_input ? std::vector<std::int64_t>{} : a.integers("axes", {});
  if (axes_input && t.has_input(1)) {
    const Constant* given = t.known(1);
    if (given == nullptr || !given->integer) {
      t.problem("the axes (input 1) must be an integer constant");
      return;
    }
    for (const double v : given->values) axes.push_back(saturated_integer(v));
  }
  if (axes.empty() && axes_input && a.integer("noop_with_empty_axes", 0) != 0) {
    t.define(data);
    return;
  }
  std::vector<bool> reduced(rank, axes.empty());
  for (const std::int64_t axis : axes) {
    const auto k = normalize_axis(axis, rank);
    if (!k) {
      t.problem(fmt::format("axes [{}] are out of range for rank {}", fmt::join(axes, ", "), rank));
      return;
    }
    reduced[*k] = true;
  }
  const bool keep = a.integer("keepdims", 1) != 0;
  Constant out;
  out.integer = data.integer;  // ReduceMean of integers stays integer (truncated), as ONNX types it
  Dims kept_strides(rank, 0);  // each input axis's stride in the output (0 where reduced)
  std::uint64_t out_elements = 1;
  for (std::size_t d = rank; d-- > 0;) {
    if (!reduced[d]) {
      kept_strides[d] = out_elements;
      out_elements *= data.dims[d];
    }
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (!reduced[d] || keep) out.dims.push_back(reduced[d] ? 1 : data.dims[d]);
  }
  const double start = type == "ReduceProd"  ? 1.0
                       : type == "ReduceMax" ? -std::numeric_limits<double>::infinity()
                       : type == "ReduceMin" ? std::numeric_limits<double>::infinity()
                                             : 0.0;
  out.values.assign(out_elements, start);
  const std::uint64_t count = out_elements == 0 ? 0 : data.values.size() / out_elements;
  for (std::uint64_t i = 0; i < data.values.size(); ++i) {
    std::uint64_t rest = i, at = 0;
    for (std::size_t d = rank; d-- > 0;) {
      at += (rest % data.dims[d]) * kept_strides[d];
      rest /= data.dims[d];
    }
    double& acc = out.values[at];
    const double v = data.values[i];
    if (std::isnan(v) || std::isnan(acc)) {
      acc = std::numeric_limits<double>::quiet_NaN();  // NaN comes out, as the run-time reductions give it
    } else {
      acc = type == "ReduceProd"  ? acc * v
            : type == "ReduceMax" ? std::max(acc, v)
            : type == "ReduceMin" ? std::min(acc, v)
                                  : acc + v;
    }
  }
  if (type == "ReduceMean") {
    for (double& v : out.values) {
      v /= static_cast<double>(count);
      if (out.integer) v = std::trunc(v);
    }
  }
  t.define(std::move(out));
}

/// Abs, Neg, Sign, Floor, Ceil, Log, Exp and Reciprocal of a constant (T5's relative-position buckets:
/// log(|distance| / exact) / log(max / exact) * buckets, cast to an integer). A float constant's values are float32
/// numbers, and each result is rounded to float32 as the model would compute it, so a cast after it truncates
/// what the model's own arithmetic gives, not an fp16 rounding of it.
void fold_unary(NodeTranslator& t, const std::string& type) {
  const Attributes a(t.node(), t.problems(), {});
  if (!t.arity(1, 1, 1)) return;
  Constant c = *t.known(0);
  const bool float_only = type == "Log" || type == "Exp" || type == "Reciprocal";
  if (c.integer && float_only) {
    t.problem(fmt::format("{} of an integer tensor (ONNX defines it for floats only)", type));
    return;
  }
  if (!check_size(t, c.dims)) return;
  const std::function<double(double)> f =
      type == "Abs"     ? std::function<double(double)>([](double v) { return std::fabs(v); })
      : type == "Neg"   ? std::function<double(double)>([](double v) { return -v; })
      : type == "Sign"  ? std::function<double(double)>([](double v) {
          return v > 0 ? 1.0 : v < 0 ? -1.0 : v == 0 ? 0.0 : v;
        })
      : type == "Floor" ? std::function<double(double)>([](double v) { return std::floor(v); })
      : type == "Ceil"  ? std::function<double(double)>([](double v) { return std::ceil(v); })
      : type == "Log"   ? std::function<double(double)>([](double v) { return std::log(v); })
      : type == "Exp"   ? std::function<double(double)>([](double v) { return std::exp(v); })
                        : std::function<double(double)>([](double v) { return 1.0 / v; });
  // An int32 tensor's values wrap as the device's int32 op wraps them (Neg and Abs of -2^31 give -2^31); wider
  // integers (int64 shape arithmetic) stay exact.
  const bool int32 = c.integer && std::all_of(c.values.begin(), c.values.end(), [](double v) {
                       return v >= static_cast<double>(std::numeric_limits<std::int32_t>::min()) &&
                              v <= static_cast<double>(std::numeric_limits<std::int32_t>::max());
                     });
  for (double& v : c.values) {
    if (int32) {
      v = static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(f(v)))));
    } else if (c.integer) {
      v = f(v);
    } else {
      v = static_cast<double>(static_cast<float>(f(static_cast<double>(static_cast<float>(v)))));
    }
  }
  c.boolean = false;
  c.source = nullptr, c.streamed = nullptr;
  t.define(std::move(c));
}

/// Min and Max of one or more constants, broadcast (T5 clamps its buckets with torch.min).
void fold_extremum(NodeTranslator& t, const std::string& type) {
  const Attributes a(t.node(), t.problems(), {});
  if (!t.arity(1, 1 << 16, 1)) return;
  Constant out = *t.known(0);
  const bool is_min = type == "Min";
  for (int i = 1; i < t.node().input_size(); ++i) {
    const Constant& next = *t.known(i);
    const auto dims = combined_dims(t, out, next);
    if (!dims) return;
    out = broadcast_map(out, next, *dims, [is_min](double p, double q) {
      if (std::isnan(p) || std::isnan(q)) return std::numeric_limits<double>::quiet_NaN();
      return is_min ? std::min(p, q) : std::max(p, q);
    });
  }
  out.boolean = false;
  out.source = nullptr, out.streamed = nullptr;
  t.define(std::move(out));
}

bool all_inputs_known(const NodeTranslator& t) {
  for (int i = 0; i < t.node().input_size(); ++i) {
    if (t.known(i) == nullptr) return false;
  }
  return t.node().input_size() > 0;
}

}  // namespace

std::optional<Translation> fold_node(const onnx::NodeProto& node, Context& ctx) {
  NodeTranslator t(node, ctx);
  const std::string& type = node.op_type();
  if (type == "Shape") {
    fold_shape(t, ctx);
  } else if (type == "Gather") {
    fold_gather(t);
  } else if (type == "Unsqueeze" || type == "Squeeze") {
    fold_squeeze(t, type == "Unsqueeze");
  } else if (type == "Expand") {
    fold_expand(t);
  } else if (type == "Cast") {
    fold_cast(t);
  } else if (type == "ConstantOfShape") {
    fold_constant_of_shape(t);
  } else if (type == "EyeLike") {
    fold_eye_like(t);
  } else if (type == "Range") {
    fold_range(t);
  } else if (type == "Concat" && all_inputs_known(t)) {
    const Attributes a(node, t.problems(), {"axis"});
    if (t.arity(1, 1 << 16, 1)) fold_concat(t, a);
  } else if (type == "Reshape" && t.small_constant(0) != nullptr && t.known(1) != nullptr) {
    fold_reshape(t);
  } else if (type == "ScatterND" && all_inputs_known(t)) {
    fold_scatter_nd(t);
  } else if (type == "Transpose" && t.small_constant(0) != nullptr) {
    fold_transpose(t);
  } else if (type == "Slice" && t.small_constant(0) != nullptr) {
    fold_slice(t);
  } else if ((type == "Equal" || type == "Less" || type == "Greater" || type == "And" || type == "Or" ||
              type == "Not" || type == "Where") &&
             all_inputs_known(t)) {
    fold_logic(t, type);
  } else if ((type == "Add" || type == "Sub" || type == "Mul" || type == "Div") && all_inputs_known(t)) {
    const Attributes a(node, t.problems(), {});
    if (t.arity(2, 2, 1)) fold_arithmetic(t, type, false);
  } else if (type == "Pow" && all_inputs_known(t)) {
    const Attributes a(node, t.problems(), {});
    if (t.arity(2, 2, 1)) fold_power(t, type);
  } else if (type == "Sqrt" && all_inputs_known(t)) {
    const Attributes a(node, t.problems(), {});
    if (t.arity(1, 1, 1)) fold_power(t, type);
  } else if ((type == "ReduceSum" || type == "ReduceMean" || type == "ReduceMax" || type == "ReduceMin" ||
              type == "ReduceProd") &&
             t.small_constant(0) != nullptr) {
    fold_reduce(t, type);
  } else if ((type == "Abs" || type == "Neg" || type == "Sign" || type == "Floor" || type == "Ceil" || type == "Log" ||
              type == "Exp" || type == "Reciprocal") &&
             all_inputs_known(t)) {
    fold_unary(t, type);
  } else if ((type == "Min" || type == "Max") && all_inputs_known(t)) {
    fold_extremum(t, type);
  } else if (type == "Mod" && all_inputs_known(t)) {
    const Attributes a(node, t.problems(), {"fmod"});
    if (t.arity(2, 2, 1)) fold_arithmetic(t, type, a.integer("fmod", 0) != 0);
  } else {
    return std::nullopt;
  }
  if (!t.problems().empty()) t.result().op = nullptr;
  return t.result();
}

}  // namespace ldmsim::onnx_import
