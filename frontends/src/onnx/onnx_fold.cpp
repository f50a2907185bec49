// Constant folding of ONNX shape computations on the control core (see onnx_nodes.hpp, docs/onnx.md). PyTorch
// exports compute reshape targets and initial states at run time from Shape(x): int64 tensors the fp16 device
// graph has no place for. With every shape known at import, those subgraphs fold to constants here and no op
// ever runs for them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

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

/// `axis` in [-rank, rank) made non-negative, or nullopt.
std::optional<std::size_t> normalize_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
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
  const Attributes a(t.node(), t.problems(), {"axis"});
  if (!t.arity(2, 2, 1)) return;
  const Constant* data = t.known(0);
  const Constant* indices = t.constant_input(1, "indices");
  if (data == nullptr) t.problem("Gather of a runtime tensor is not supported (only of shapes and constants)");
  if (data == nullptr || indices == nullptr) return;
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
  const Attributes a(t.node(), t.problems(), {});
  if (!t.arity(2, 2, 1)) return;
  const Constant* data = t.known(0);
  const auto shape = integer_list(t, 1, "shape");
  if (data == nullptr) t.problem("Expand of a runtime tensor is not supported (only of constants)");
  if (data == nullptr || !shape) return;
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
  if (!to_float && !to_integer) {
    t.problem(fmt::format("cast to {} is not supported (float, float16, double, int32, int64)",
                          DT::DataType_Name(static_cast<DT::DataType>(to))));
    return;
  }
  const Constant* value = t.known(0);
  if (value == nullptr) {
    if (!to_float) {
      t.problem("Cast of a runtime tensor to an integer type is not supported");
      return;
    }
    t.context().aliases[t.node().output(0)] = t.input(0);
    return;
  }
  Constant c = *value;
  c.integer = to_integer;
  for (double& v : c.values) {
    if (to_integer) {
      const auto n = exact_integer(std::trunc(v));
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
  c.values.assign(*foldable_count(*dims), fill.values[0]);
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

void fold_arithmetic(NodeTranslator& t, const std::string& type) {
  const Constant& x = *t.known(0);
  const Constant& y = *t.known(1);
  const auto dims = broadcast_shape(x.dims, y.dims);
  if (!dims) {
    t.problem(fmt::format("[{}] and [{}] do not broadcast", fmt::join(x.dims, ", "), fmt::join(y.dims, ", ")));
    return;
  }
  if (!check_size(t, *dims)) return;
  const bool integer = x.integer && y.integer;
  if (type == "Div" && integer && std::find(y.values.begin(), y.values.end(), 0.0) != y.values.end()) {
    t.problem("integer division by zero");
    return;
  }
  const std::function<double(double, double)> f =
      type == "Add"   ? std::function<double(double, double)>([](double p, double q) { return p + q; })
      : type == "Sub" ? std::function<double(double, double)>([](double p, double q) { return p - q; })
      : type == "Mul" ? std::function<double(double, double)>([](double p, double q) { return p * q; })
                      : std::function<double(double, double)>(
                            [integer](double p, double q) { return integer ? std::trunc(p / q) : p / q; });
  t.define(broadcast_map(x, y, *dims, f));
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
  } else if (type == "Range") {
    fold_range(t);
  } else if (type == "Concat" && all_inputs_known(t)) {
    const Attributes a(node, t.problems(), {"axis"});
    if (t.arity(1, 1 << 16, 1)) fold_concat(t, a);
  } else if ((type == "Add" || type == "Sub" || type == "Mul" || type == "Div") && all_inputs_known(t)) {
    const Attributes a(node, t.problems(), {});
    if (t.arity(2, 2, 1)) fold_arithmetic(t, type);
  } else {
    return std::nullopt;
  }
  if (!t.problems().empty()) t.result().op = nullptr;
  return t.result();
}

}  // namespace ldmsim::onnx_import
