// ONNX nodes that pick, repeat or pad parts of a runtime tensor (see onnx_translator.hpp): Slice and Split become
// slice ops, Gather with constant indices slices (and concatenates), Expand and Pad become expand and pad ops. Their
// index inputs must be constants (shape computations fold to constants at import, onnx_fold.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/kernels/slice_axis.hpp"
#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {
namespace {

/// Input i as int64 values (a scalar or 1-D integer constant), or nullopt with a problem naming `role`.
std::optional<std::vector<std::int64_t>> constant_integers(NodeTranslator& t, int i, const std::string& role) {
  const Constant* c = t.constant_input(i, role);
  if (c == nullptr) return std::nullopt;
  if (!c->integer || c->dims.size() > 1) {
    t.problem(fmt::format("the {} must be a scalar or 1-D integer tensor", role));
    return std::nullopt;
  }
  std::vector<std::int64_t> out;
  for (const double v : c->values) out.push_back(saturated_integer(v));
  return out;
}

std::optional<std::size_t> axis_in(NodeTranslator& t, std::int64_t axis, std::size_t rank) {
  const auto normal = normalize_axis(axis, rank);
  if (!normal) t.problem(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return normal;
}

/// The output dims of a Slice of a tensor of `dims` when it takes nothing from some axis, else nullopt (also when
/// the lists are malformed: the slice op then says why).
std::optional<std::vector<std::uint64_t>> empty_slice_dims(const std::vector<std::uint64_t>& dims,
                                                           const nlohmann::json& attrs) {
  const auto list = [&](const char* key) {
    return attrs.contains(key) ? attrs[key].get<std::vector<std::int64_t>>() : std::vector<std::int64_t>{};
  };
  const std::vector<std::int64_t> starts = list("starts"), ends = list("ends");
  std::vector<std::int64_t> axes = list("axes"), steps = list("steps");
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || starts.size() != axes.size() || starts.size() != steps.size()) {
    return std::nullopt;
  }
  std::vector<std::uint64_t> out = dims;
  std::vector<bool> seen(dims.size(), false);
  bool empty = false;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto axis = normalize_axis(axes[i], dims.size());
    if (!axis || seen[*axis] || steps[i] == 0) return std::nullopt;
    seen[*axis] = true;
    out[*axis] = slice_axis(starts[i], ends[i], steps[i], dims[*axis]).count;
    empty = empty || out[*axis] == 0;
  }
  if (!empty) return std::nullopt;
  return out;
}

}  // namespace

void translate_slice(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {});
  if (!t.arity(3, 5, 1)) return;
  nlohmann::json attrs = nlohmann::json::object();
  const char* names[] = {"", "starts", "ends", "axes", "steps"};
  for (int i = 1; i <= 4; ++i) {
    if (!t.has_input(i)) continue;
    const auto values = constant_integers(t, i, names[i]);
    if (!values) return;
    attrs[names[i]] = *values;
  }
  // torch.roll by 0 slices nothing off one side: the empty part is a constant with no values, which Concat drops.
  const auto shape = t.context().shapes.find(t.input(0));
  if (shape != t.context().shapes.end()) {
    if (auto dims = empty_slice_dims(shape->second, attrs)) {
      Constant empty;
      empty.dims = std::move(*dims);
      hold_as(empty, tensor_dtype(t.context(), t.input(0)));
      t.define(std::move(empty));
      return;
    }
  }
  t.op("slice", {0}, std::move(attrs));
}

void translate_split(const onnx::NodeProto& node, NodeTranslator& t, const Context& ctx) {
  const bool split_input = ctx.opset >= 13;
  const Attributes a(node, t.problems(),
                     split_input ? std::set<std::string>{"axis"} : std::set<std::string>{"axis", "split"});
  int outputs = node.output_size();
  while (outputs > 0 && node.output(outputs - 1).empty()) --outputs;
  if (outputs < 1 || !t.arity(1, split_input ? 2 : 1, outputs)) return;
  const auto* dims = t.input_shape(0);
  if (dims == nullptr) return;
  const auto axis = axis_in(t, a.integer("axis", 0), dims->size());
  if (!axis) return;
  const std::uint64_t extent = (*dims)[*axis];
  std::vector<std::int64_t> sizes;
  if (split_input && t.has_input(1)) {
    const auto given = constant_integers(t, 1, "split");
    if (!given) return;
    sizes = *given;
  } else if (!split_input) {
    sizes = a.integers("split", {});
  }
  if (sizes.empty()) {  // equal parts
    if (extent % static_cast<std::uint64_t>(outputs) != 0) {
      t.problem(fmt::format("axis {} of {} does not split into {} equal parts", *axis, extent, outputs));
      return;
    }
    sizes.assign(static_cast<std::size_t>(outputs),
                 static_cast<std::int64_t>(extent / static_cast<std::uint64_t>(outputs)));
  }
  if (sizes.size() != static_cast<std::size_t>(outputs)) {
    t.problem(fmt::format("split has {} sizes for {} outputs", sizes.size(), outputs));
    return;
  }
  std::uint64_t sum = 0;
  for (const std::int64_t s : sizes) {
    if (s <= 0) {
      t.problem(fmt::format("split sizes must be positive (tensors have no empty dims), got {}", s));
      return;
    }
    sum += static_cast<std::uint64_t>(s);
  }
  if (sum != extent) {
    t.problem(fmt::format("split sizes add up to {} but axis {} has {}", sum, *axis, extent));
    return;
  }
  std::int64_t at = 0;
  for (int k = 0; k < outputs; ++k) {
    const std::int64_t size = sizes[static_cast<std::size_t>(k)];
    t.add_op("slice", {t.input(0)}, {node.output(k)},
             {{"starts", {at}}, {"ends", {at + size}}, {"axes", {static_cast<std::int64_t>(*axis)}}});
    at += size;
  }
}

void translate_gather_view(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"axis"});
  if (!t.arity(2, 2, 1)) return;
  const auto* dims = t.input_shape(0);
  const Constant* indices = t.constant_input(1, "indices");
  if (dims == nullptr) return;
  if (indices == nullptr) {
    t.problems().back() += " (gathering by runtime indices is not supported yet)";
    return;
  }
  const auto axis = axis_in(t, a.integer("axis", 0), dims->size());
  if (!axis) return;
  if (!indices->integer) {
    t.problem("indices must be integers (int64 or int32)");
    return;
  }
  if (indices->dims.size() > 1) {
    t.op("gather", {0, 1}, {{"axis", a.integer("axis", 0)}});
    return;
  }
  const auto extent = static_cast<std::int64_t>((*dims)[*axis]);
  std::vector<std::int64_t> picked;
  for (const double v : indices->values) {
    const auto exact = exact_integer(v);
    std::int64_t index = exact ? *exact : extent;
    if (index < 0) index += extent;
    if (!exact || index < 0 || index >= extent) {
      t.problem(fmt::format("index {} is out of range for a dimension of {}", v, extent));
      return;
    }
    picked.push_back(index);
  }
  constexpr std::size_t kMaxPicked = 8;  // one slice op per index; more: the gather kernel
  if (picked.size() > kMaxPicked) {
    t.op("gather", {0, 1}, {{"axis", a.integer("axis", 0)}});
    return;
  }
  if (picked.empty()) {
    t.problem("gathers no index from a runtime tensor");
    return;
  }
  const auto ax = static_cast<std::int64_t>(*axis);
  const auto slice_at = [&](std::int64_t index, const std::string& out) {
    t.add_op("slice", {t.input(0)}, {out}, {{"starts", {index}}, {"ends", {index + 1}}, {"axes", {ax}}});
  };
  const std::string& y = node.output(0);
  if (indices->dims.empty()) {  // a scalar index removes the axis: slice, then reshape without it
    const std::string part = t.fresh_name(y + "/slice");
    slice_at(picked[0], part);
    std::vector<std::int64_t> shape;
    for (std::size_t d = 0; d < dims->size(); ++d) {
      if (d != *axis) shape.push_back(static_cast<std::int64_t>((*dims)[d]));
    }
    t.add_op("reshape", {part}, {y}, {{"shape", shape}});
    return;
  }
  if (picked.size() == 1) {
    slice_at(picked[0], y);
    return;
  }
  std::vector<std::string> parts;
  for (const std::int64_t index : picked) {
    parts.push_back(t.fresh_name(fmt::format("{}/slice{}", y, parts.size())));
    slice_at(index, parts.back());
  }
  t.add_op("concat", parts, {y}, {{"axis", ax}});
}

void translate_pad(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"mode"});
  if (!t.arity(2, 4, 1)) return;
  if (t.has_input(3)) {
    t.problem("the axes input is not supported (give pads for every axis)");
    return;
  }
  const auto pads = constant_integers(t, 1, "pads");
  if (!pads) return;
  nlohmann::json attrs = {{"pads", *pads}, {"mode", a.text("mode", "constant")}};
  if (t.has_input(2)) {
    const Constant* value = t.constant_input(2, "constant_value");
    if (value == nullptr) return;
    if (value->values.size() != 1) {
      t.problem("constant_value must be a scalar");
      return;
    }
    attrs["value"] = value->values[0];
  }
  if (std::none_of(pads->begin(), pads->end(), [](std::int64_t p) { return p < 0; })) {
    t.op("pad", {0}, std::move(attrs));
    return;
  }
  // Negative pads crop: a slice first, then the positive pads of the cropped tensor (as ONNX Runtime orders them).
  const auto* dims = t.input_shape(0);
  if (dims == nullptr) return;
  const std::size_t rank = dims->size();
  if (pads->size() != 2 * rank) {
    t.problem(fmt::format("pads has {} entries for an input of rank {} (2 per axis)", pads->size(), rank));
    return;
  }
  std::vector<std::int64_t> starts, ends, axes, grown(2 * rank, 0);
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t begin = (*pads)[d], end = (*pads)[d + rank];
    const auto extent = static_cast<std::int64_t>((*dims)[d]);
    grown[d] = std::max<std::int64_t>(begin, 0);
    grown[d + rank] = std::max<std::int64_t>(end, 0);
    if (begin >= 0 && end >= 0) continue;
    const auto crop = [extent](std::int64_t p) { return p >= 0 ? 0 : p <= -extent ? extent : -p; };  // no -INT64_MIN
    const std::int64_t first = crop(begin), last = extent - crop(end);
    if (first >= last) {
      t.problem(fmt::format("pads [{}] crop all {} elements of axis {}", fmt::join(*pads, ", "), extent, d));
      return;
    }
    starts.push_back(first);
    ends.push_back(last);
    axes.push_back(static_cast<std::int64_t>(d));
  }
  const bool grows = std::any_of(grown.begin(), grown.end(), [](std::int64_t p) { return p > 0; });
  const std::string& y = node.output(0);
  const std::string cropped = grows ? t.fresh_name(y + "/cropped") : y;
  t.add_op("slice", {t.input(0)}, {cropped}, {{"starts", starts}, {"ends", ends}, {"axes", axes}});
  if (grows) {
    attrs["pads"] = grown;
    t.add_op("pad", {cropped}, {y}, std::move(attrs));
  }
}

void translate_expand_view(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {});
  if (!t.arity(2, 2, 1)) return;
  const auto shape = constant_integers(t, 1, "shape");
  if (!shape) return;
  t.op("expand", {0}, {{"shape", *shape}});
}

}  // namespace ldmsim::onnx_import
