// ONNX nodes as workload ops (see onnx_nodes.hpp; the mapping is documented in docs/onnx.md).
#include "onnx_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

bool kernel_is_window(NodeTranslator& t, const std::vector<std::int64_t>& kernel,
                      const std::vector<std::uint64_t>& weights) {
  // kernel_shape is optional (the weights' window), but one given must be the weights' own.
  if (kernel.empty() || kernel.size() > weights.size()) return true;
  const std::vector<std::uint64_t> window(weights.end() - static_cast<std::ptrdiff_t>(kernel.size()), weights.end());
  if (std::equal(kernel.begin(), kernel.end(), window.begin(),
                 [](std::int64_t k, std::uint64_t d) { return k >= 0 && static_cast<std::uint64_t>(k) == d; })) {
    return true;
  }
  t.problem(fmt::format("kernel_shape [{}] disagrees with the weights '{}' of shape [{}], whose window is {}",
                        fmt::join(kernel, ", "), t.input(1), fmt::join(weights, ", "), fmt::join(window, "x")));
  return false;
}

namespace {

/// The most inputs a Concat node may have (a tree of 64-input concats joins them).
constexpr int kMaxConcatNodeInputs = 1 << 16;

using nlohmann::json;
using Attr = onnx::AttributeProto;

/// The 2-D window attributes of Conv and the pools: kernel_shape, strides, dilations, pads and auto_pad.
struct Window {
  std::vector<std::int64_t> kernel, strides, dilations, pads;
};

std::optional<Window> read_window(const Attributes& a, NodeTranslator& t) {
  Window w;
  w.kernel = a.integers("kernel_shape", {});
  w.strides = a.integers("strides", {1, 1});
  w.dilations = a.integers("dilations", {1, 1});
  w.pads = a.integers("pads", {0, 0, 0, 0});
  const std::string auto_pad = a.text("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    t.problem(fmt::format("auto_pad {} is not supported (NOTSET or VALID; export with explicit pads)", auto_pad));
  }
  if (auto_pad == "VALID") w.pads = {0, 0, 0, 0};
  if ((!w.kernel.empty() && w.kernel.size() != 2) || w.strides.size() != 2 || w.dilations.size() != 2 ||
      w.pads.size() != 4) {
    t.problem("only 2-D windows are supported (kernel_shape, strides and dilations of 2, pads of 4)");
    return std::nullopt;
  }
  const auto negative = [](const std::vector<std::int64_t>& v) {
    return std::any_of(v.begin(), v.end(), [](std::int64_t x) { return x < 0; });
  };
  if (negative(w.kernel) || negative(w.strides) || negative(w.dilations) || negative(w.pads)) {
    t.problem("negative kernel_shape, strides, dilations or pads");
    return std::nullopt;
  }
  return w;
}

void translate_conv(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  if (!t.arity(2, 3, 1)) return;
  const auto w = read_window(a, t);
  if (!w) return;
  if (const auto weights = t.context().shapes.find(t.input(1)); weights != t.context().shapes.end() &&
                                                                weights->second.size() == 4 &&
                                                                !kernel_is_window(t, w->kernel, weights->second)) {
    return;
  }
  // ONNX pads are [top, left, bottom, right] for 2-D: conv's own order.
  t.op("conv", node.input_size() > 2 && t.has_input(2) ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1},
       {{"stride", w->strides}, {"pad", w->pads}, {"dilation", w->dilations}, {"groups", a.integer("group", 1)}});
}

template <bool kMax>
void translate_pool(const onnx::NodeProto& node, NodeTranslator& t) {
  std::set<std::string> allowed = {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"};
  allowed.insert(kMax ? "storage_order" : "count_include_pad");
  const Attributes a(node, t.problems(), allowed);
  if (!t.arity(1, 1, 1)) return;
  const auto w = read_window(a, t);
  if (!w) return;
  if (w->kernel.empty()) t.problem("kernel_shape is required");
  if (!kMax && w->dilations != std::vector<std::int64_t>{1, 1}) {
    t.problem("dilations other than 1 (AveragePool takes them from opset 19)");
  }
  if (kMax && a.integer("storage_order", 0) != 0) t.problem("storage_order 1 is not supported");
  if (w->pads[0] != w->pads[2] || w->pads[1] != w->pads[3]) {
    t.problem(fmt::format("asymmetric pads [{}] are not supported (pools pad top = bottom, left = right)",
                          fmt::join(w->pads, ", ")));
  }
  if (!t.problems().empty()) return;
  json attrs = {{"kernel", w->kernel}, {"stride", w->strides}, {"pad", {w->pads[0], w->pads[1]}}};
  if (!kMax) attrs["count_include_pad"] = a.integer("count_include_pad", 0) != 0;
  if (kMax && w->dilations != std::vector<std::int64_t>{1, 1}) attrs["dilation"] = w->dilations;
  if (a.integer("ceil_mode", 0) != 0) attrs["ceil_mode"] = true;
  t.op(kMax ? "max_pool" : "avg_pool", {0}, std::move(attrs));
}

void translate_clip(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {});
  if (!t.arity(1, 3, 1)) return;
  // Constant bounds are the clip op's attributes; a runtime bound (torch.clamp by a tensor) is a max, then a min,
  // so y = min(max(x, min), max) as ONNX defines it, also when min > max.
  const char* names[] = {"", "min", "max"};
  json attrs[3] = {json::object(), json::object(), json::object()};
  bool runtime[3] = {false, false, false};
  for (int i = 1; i <= 2; ++i) {
    if (!t.has_input(i)) continue;
    const auto c = t.context().constants.find(t.input(i));
    if (c == t.context().constants.end()) {
      runtime[i] = true;
      continue;
    }
    const Constant* known = t.constant_input(i, names[i]);
    if (known == nullptr) continue;
    if (known->values.size() != 1) {
      t.problem(fmt::format("{} must be a scalar", names[i]));
      continue;
    }
    attrs[i][names[i]] = known->values[0];
  }
  if (!runtime[1] && !runtime[2]) {
    json both = json::object();
    for (int i = 1; i <= 2; ++i) both.update(attrs[i]);
    if (both.contains("min") && both.contains("max") && both["min"].get<double>() > both["max"].get<double>()) {
      both["min"] = both["max"];  // min(max(x, min), max) is max everywhere
    }
    t.op("clip", {0}, std::move(both));
    return;
  }
  const std::string& y = node.output(0);
  std::string acc = t.input(0);
  for (int i = 1; i <= 2; ++i) {
    if (!t.has_input(i) || (!runtime[i] && attrs[i].empty())) continue;
    const bool last = i == 2 || !t.has_input(2);
    const std::string out = last ? y : t.fresh_name(y + "/" + names[i]);
    if (runtime[i]) {
      t.add_op(i == 1 ? "max" : "min", {acc, t.input(i)}, {out});
    } else {
      t.add_op("clip", {acc}, {out}, std::move(attrs[i]));
    }
    acc = out;
  }
}

/// The permuted dims when `perm` moves only axes of size 1 (the elements keep their order: a reshape), else nullopt.
std::optional<std::vector<std::int64_t>> order_keeping_permutation(const std::vector<std::int64_t>& perm,
                                                                   const std::vector<std::uint64_t>* dims) {
  if (dims == nullptr || perm.size() != dims->size()) return std::nullopt;
  std::vector<std::int64_t> out;
  std::int64_t last_moving = -1;
  std::vector<bool> seen(perm.size(), false);
  for (const std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(perm.size()) || seen[static_cast<std::size_t>(p)]) return std::nullopt;
    seen[static_cast<std::size_t>(p)] = true;
    const std::uint64_t d = (*dims)[static_cast<std::size_t>(p)];
    if (d != 1) {
      if (p < last_moving) return std::nullopt;
      last_moving = p;
    }
    out.push_back(static_cast<std::int64_t>(d));
  }
  return out;
}

/// Input i as a list of integers (a constant 1-D integer tensor, the `role` of the node), or nullopt with a problem.
std::optional<std::vector<std::int64_t>> integer_list(NodeTranslator& t, int i, const std::string& role) {
  const Constant* given = t.constant_input(i, role);
  if (given == nullptr) return std::nullopt;
  std::vector<std::int64_t> out;
  if (!given->integer || given->dims.size() > 1) {
    t.problem(fmt::format("the {} must be a 1-D integer tensor", role));
    return std::nullopt;
  }
  for (const double v : given->values) {
    const auto d = exact_integer(v);
    if (!d) {
      t.problem(fmt::format("the {} holds {:.17g} at index {}, too large to be read exactly", role, v, out.size()));
      return std::nullopt;
    }
    out.push_back(*d);
  }
  return out;
}

/// Input i as one integer (a constant of one value, the `role` of the node), or nullopt with a problem.
std::optional<std::int64_t> single_integer(NodeTranslator& t, int i, const std::string& role) {
  const auto given = integer_list(t, i, role);
  if (!given) return std::nullopt;
  if (given->size() != 1) {
    t.problem(fmt::format("{} must hold one value, not {}", role, given->size()));
    return std::nullopt;
  }
  return (*given)[0];
}

void translate_reshape(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"allowzero"});
  if (!t.arity(2, 2, 1)) return;
  if (a.integer("allowzero", 0) != 0) t.problem("allowzero 1 is not supported");
  if (const auto dims = integer_list(t, 1, "shape")) t.op("reshape", {0}, {{"shape", *dims}});
}

/// `op` (which works along the last axis) applied along `axis` of the node's input 0: the input transposed to put
/// that axis last, the op, and the transpose back, into each of the node's outputs.
void along_axis_by_transposes(NodeTranslator& t, std::size_t axis, std::size_t rank, const std::string& op,
                              const nlohmann::json& attrs) {
  std::vector<std::int64_t> to_last, back(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    if (d != axis) to_last.push_back(static_cast<std::int64_t>(d));
  }
  to_last.push_back(static_cast<std::int64_t>(axis));
  for (std::size_t d = 0; d < rank; ++d) back[static_cast<std::size_t>(to_last[d])] = static_cast<std::int64_t>(d);
  const std::string& y = t.node().output(0);
  const std::string moved = t.fresh_name(y + "/axis_last");
  t.add_op("transpose", {t.input(0)}, {moved}, {{"perm", to_last}});
  std::vector<std::string> done;
  for (int o = 0; o < t.node().output_size(); ++o) {
    done.push_back(t.fresh_name(t.node().output(o) + "/" + op + "_last"));
  }
  t.add_op(op, {moved}, done, attrs);
  for (int o = 0; o < t.node().output_size(); ++o) {
    t.add_op("transpose", {done[static_cast<std::size_t>(o)]}, {t.node().output(o)}, {{"perm", back}});
  }
}

/// TopK with a constant K (input 1) along any axis: top_k runs along the last, so another axis is moved last by a
/// transpose and both outputs are moved back (torch.topk along channels; torch.sort exports as TopK of every
/// element).
void translate_top_k(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"axis", "largest", "sorted"});
  if (!t.arity(2, 2, 2)) return;
  const auto k = single_integer(t, 1, "K");
  const auto* x = t.input_shape(0);
  if (!k || x == nullptr) return;
  const auto axis = t.axis(a.integer("axis", -1), x->size());
  if (!axis) return;
  if (*k < 1 || static_cast<std::uint64_t>(*k) > (*x)[*axis]) {
    t.problem(fmt::format("K = {} must be from 1 to the axis' {} elements", *k, (*x)[*axis]));
    return;
  }
  const nlohmann::json attrs = {
      {"k", *k}, {"largest", a.integer("largest", 1) != 0 ? 1 : 0}, {"sorted", a.integer("sorted", 1) != 0 ? 1 : 0}};
  if (*axis + 1 == x->size()) {
    t.op("top_k", {0}, attrs);
    return;
  }
  along_axis_by_transposes(t, *axis, x->size(), "top_k", attrs);
}

void translate_softmax(const onnx::NodeProto& node, NodeTranslator& t, const Context& ctx) {
  const Attributes a(node, t.problems(), {"axis"});
  if (!t.arity(1, 1, 1)) return;
  // Before opset 13 softmax normalises the 2-D view split at axis (default 1), as ldmsim's softmax does; from 13
  // on it normalises one axis (default -1): the same where every axis after it has size 1. Over another axis the
  // input is transposed to put that axis last, normalised there and transposed back: the same sums, exactly.
  const std::int64_t given = a.integer("axis", ctx.opset < 13 ? 1 : -1);
  if (ctx.opset < 13 || given == -1) {
    t.op("softmax", {0}, {{"axis", given}});
    return;
  }
  const auto* x = t.input_shape(0);
  if (x == nullptr) return;
  const auto axis = t.axis(given, x->size());
  if (!axis) return;
  if (std::all_of(x->begin() + static_cast<std::ptrdiff_t>(*axis) + 1, x->end(),
                  [](std::uint64_t d) { return d == 1; })) {
    t.op("softmax", {0}, {{"axis", static_cast<std::int64_t>(*axis)}});
    return;
  }
  along_axis_by_transposes(t, *axis, x->size(), "softmax", {{"axis", -1}});
}

/// CumSum over the constant axis (input 1): cumsum runs along the last axis, so another axis is moved last by a
/// transpose and back after it (position ids summed over a sequence axis of a mask).
void translate_cumsum(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"exclusive", "reverse"});
  if (!t.arity(2, 2, 1)) return;
  const auto given = single_integer(t, 1, "axis");
  const auto* x = t.input_shape(0);
  if (!given || x == nullptr) return;
  const auto axis = t.axis(*given, x->size());
  if (!axis) return;
  const nlohmann::json attrs = {{"exclusive", a.integer("exclusive", 0)}, {"reverse", a.integer("reverse", 0)}};
  if (*axis + 1 == x->size()) {
    t.op("cumsum", {0}, attrs);
    return;
  }
  along_axis_by_transposes(t, *axis, x->size(), "cumsum", attrs);
}

/// The reduced axes of input 0 in blocks of adjacent axes, in order; empty when the axes are not valid (the op then
/// says why) or the input's rank is unknown.
std::vector<std::vector<std::int64_t>> adjacent_runs(NodeTranslator& t, const std::vector<std::int64_t>& axes) {
  const auto shape = t.context().shapes.find(t.input(0));
  if (axes.empty() || shape == t.context().shapes.end()) return {};
  std::vector<bool> reduced(shape->second.size(), false);
  for (const std::int64_t given : axes) {
    const auto axis = normalize_axis(given, reduced.size());
    if (!axis || reduced[*axis]) return {};
    reduced[*axis] = true;
  }
  std::vector<std::vector<std::int64_t>> runs;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) continue;
    if (d == 0 || !reduced[d - 1]) runs.emplace_back();
    runs.back().push_back(static_cast<std::int64_t>(d));
  }
  return runs;
}

/// A reduction over axes that are not adjacent (torch's amax/mean over dims (1, 3)) as one reduction per block of
/// adjacent axes, each keeping its axes as 1s, then a reshape when the node drops them. Max and min are exact; a
/// sum or mean of partial sums and means differs from one pass only by fp16 rounding.
void reduce_runs(NodeTranslator& t, const std::string& op, const std::vector<std::vector<std::int64_t>>& runs,
                 bool keepdims) {
  const std::string& y = t.node().output(0);
  std::string acc = t.input(0);
  for (std::size_t r = runs.size(); r-- > 0;) {
    const bool last = r == 0 && keepdims;
    const std::string out = last ? y : t.fresh_name(fmt::format("{}/{}{}", y, op, r));
    t.add_op(op, {acc}, {out}, {{"axes", runs[r]}, {"keepdims", 1}});
    acc = out;
  }
  if (keepdims) return;
  const auto& dims = t.context().shapes.at(t.input(0));
  std::vector<bool> reduced(dims.size(), false);
  for (const auto& run : runs) {
    for (const std::int64_t d : run) reduced[static_cast<std::size_t>(d)] = true;
  }
  std::vector<std::int64_t> kept;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (!reduced[d]) kept.push_back(static_cast<std::int64_t>(dims[d]));
  }
  t.add_op("reshape", {acc}, {y}, {{"shape", kept}});
}

/// ReduceSum/Max/Min of an int32 tensor (attention_mask.sum(-1)) by reduce_integers, its axes checked here.
void integer_reduction(NodeTranslator& t, const std::string& op, const std::vector<std::int64_t>& axes, bool keepdims) {
  const auto* shape = t.input_shape(0);
  if (shape == nullptr) return;
  std::vector<std::size_t> normal;
  for (const std::int64_t given : axes) {
    const auto axis = t.axis(given, shape->size());
    if (!axis) return;
    if (std::find(normal.begin(), normal.end(), *axis) != normal.end()) {
      t.problem(fmt::format("axis {} is reduced twice", given));
      return;
    }
    normal.push_back(*axis);
  }
  reduce_integers(t, op == "reduce_sum" ? "add" : op == "reduce_max" ? "max" : "min", normal, keepdims);
}

/// ReduceSum / ReduceMean / ReduceMax / ReduceMin: axes an attribute (ReduceSum before opset 13, the others up to
/// 17) or ReduceSum's optional second input (a constant) from opset 13 on.
void translate_reduce(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx, const std::string& op) {
  const bool axes_input = op == "reduce_sum" && ctx.opset >= 13;
  const Attributes a(node, t.problems(),
                     axes_input ? std::set<std::string>{"keepdims", "noop_with_empty_axes"}
                                : std::set<std::string>{"axes", "keepdims"});
  if (!t.arity(1, axes_input ? 2 : 1, 1)) return;
  nlohmann::json attrs = {{"keepdims", a.integer("keepdims", 1)}};
  std::vector<std::int64_t> axes;
  if (axes_input && t.has_input(1)) {
    const auto given = integer_list(t, 1, "axes");
    if (!given) return;
    axes = *given;
  } else if (!axes_input) {
    axes = a.integers("axes", {});
  }
  if (axes.empty() && axes_input && a.integer("noop_with_empty_axes", 0) != 0) {
    ctx.aliases[node.output(0)] = t.input(0);  // no axes and noop: the input itself
    return;
  }
  if (!axes.empty()) attrs["axes"] = axes;
  if (tensor_dtype(ctx, t.input(0)) == DType::kI32 && op != "reduce_mean") {
    integer_reduction(t, op, axes, a.integer("keepdims", 1) != 0);
    return;
  }
  if (const auto runs = adjacent_runs(t, axes); runs.size() > 1) {
    reduce_runs(t, op, runs, a.integer("keepdims", 1) != 0);
    return;
  }
  t.op(op, {0}, std::move(attrs));
}

void translate_constant(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"value", "value_float", "value_floats", "value_int", "value_ints"});
  if (!t.arity(0, 0, 1)) return;
  Constant c;
  if (const Attr* value = a.find("value")) {
    std::string problem;
    const auto read = value->type() == Attr::TENSOR ? read_tensor(value->t(), problem) : std::nullopt;
    if (!read) {
      t.problem(fmt::format("value {}", problem.empty() ? "is not a tensor" : problem));
      return;
    }
    c = *read;
  } else if (a.has("value_float")) {
    c.values = {a.real("value_float", 0)};
  } else if (a.has("value_int")) {
    c.values = {static_cast<double>(a.integer("value_int", 0))};
    c.integer = true;
  } else if (a.has("value_ints")) {
    for (const std::int64_t v : a.integers("value_ints", {})) c.values.push_back(static_cast<double>(v));
    c.dims = {c.values.size()};
    c.integer = true;
  } else if (const Attr* f = a.find("value_floats")) {
    for (const float v : f->floats()) c.values.push_back(v);
    c.dims = {c.values.size()};
  } else {
    t.problem("has no value");
    return;
  }
  t.define(std::move(c));
}

void translate_alias(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx, bool dropout) {
  const Attributes a(node, t.problems(),
                     dropout ? std::set<std::string>{"seed", "ratio", "is_test"} : std::set<std::string>{});
  if (dropout) {
    if (!t.arity(1, 3, node.output_size() == 2 ? 2 : 1)) return;
    if (t.has_input(2)) {
      const Constant* training = t.constant_input(2, "training_mode");
      // A ratio of 0 keeps every element even in training mode (Swin's attention dropout, exported as such).
      const Constant* ratio = t.has_input(1) ? t.known(1) : nullptr;
      const bool keeps_all = ratio != nullptr && ratio->values.size() == 1 && ratio->values[0] == 0;
      if (training != nullptr && !training->values.empty() && training->values[0] != 0 && !keeps_all) {
        t.problem("training_mode true is not supported (inference only)");
      }
    }
  } else if (!t.arity(1, 1, 1)) {
    return;
  }
  ctx.aliases[node.output(0)] = t.input(0);
}

/// BatchNormalization: spatialbn on NCHW; BatchNorm1d's [N, C] and [N, C, L] and BatchNorm3d's [N, C, D, H, W] as
/// [N, C, spatial elements, 1] between two reshapes (the statistics are per channel whatever the spatial axes).
void translate_batch_norm(const onnx::NodeProto& node, NodeTranslator& t, float epsilon) {
  const auto* dims = t.input_shape(0);
  if (dims == nullptr) return;
  if (dims->size() == 4) {
    t.op("spatialbn", {0, 1, 2, 3, 4}, {{"epsilon", epsilon}});
    return;
  }
  if (dims->size() < 2) {
    t.problem(fmt::format("the input must be [N, C, ...], got rank {}", dims->size()));
    return;
  }
  std::uint64_t spatial = 1;
  for (std::size_t d = 2; d < dims->size(); ++d) spatial *= (*dims)[d];  // a tensor's elements: no overflow
  const std::string& y = node.output(0);
  const std::string planes = t.fresh_name(y + "/as_nchw"), normed = t.fresh_name(y + "/nchw");
  std::vector<std::int64_t> back;
  for (const std::uint64_t d : *dims) back.push_back(static_cast<std::int64_t>(d));
  t.add_op("reshape", {t.input(0)}, {planes},
           {{"shape", {back[0], back[1], static_cast<std::int64_t>(spatial), std::int64_t{1}}}});
  std::vector<std::string> inputs = {planes};
  for (int i = 1; i < 5; ++i) inputs.push_back(t.input(i));
  t.add_op("spatialbn", inputs, {normed}, {{"epsilon", epsilon}});
  t.add_op("reshape", {normed}, {y}, {{"shape", back}});
}

/// IsNaN as not(equal(x, x)) (only NaN differs from itself); IsInf as equal to +inf and/or -inf (its
/// detect_positive and detect_negative attributes), as torch.nan_to_num and torch.isinf export them.
void translate_special_values(const onnx::NodeProto& node, NodeTranslator& t) {
  const bool nan = node.op_type() == "IsNaN";
  const Attributes a(node, t.problems(),
                     nan ? std::set<std::string>{} : std::set<std::string>{"detect_negative", "detect_positive"});
  if (!t.arity(1, 1, 1)) return;
  const std::string& y = node.output(0);
  if (nan) {
    const std::string same = t.fresh_name(y + "/equals_itself");
    t.add_op("equal", {t.input(0), t.input(0)}, {same});
    t.add_op("not", {same}, {y});
    return;
  }
  const bool positive = a.integer("detect_positive", 1) != 0, negative = a.integer("detect_negative", 1) != 0;
  const auto is = [&](double infinity, const std::string& out) {
    Constant value;
    value.values = {infinity};
    t.add_op("equal", {t.input(0), t.add_constant(y + "/infinity", std::move(value))}, {out});
  };
  const double inf = std::numeric_limits<double>::infinity();
  if (positive && negative) {
    const std::string above = t.fresh_name(y + "/positive"), below = t.fresh_name(y + "/negative");
    is(inf, above);
    is(-inf, below);
    t.add_op("or", {above, below}, {y});
  } else if (positive || negative) {
    is(positive ? inf : -inf, y);
  } else {  // detects nothing: x == NaN is false everywhere
    is(std::numeric_limits<double>::quiet_NaN(), y);
  }
}

/// The inputs of a Concat on `axis` that hold elements: an empty constant (a Slice that took nothing, as torch.roll by
/// 0 makes) adds nothing to the result. The node's first input stands for all when every input is empty.
std::vector<int> concatenated_inputs(NodeTranslator& t, std::int64_t axis) {
  const auto& constants = t.context().constants;
  const auto empty = [&](int i) {
    const auto c = constants.find(t.input(i));
    return c != constants.end() && c->second.source == nullptr && c->second.values.empty();
  };
  // The dims every input shares but the axis, from an input that holds elements.
  const std::vector<std::uint64_t>* like = nullptr;
  for (int i = 0; i < t.node().input_size() && like == nullptr; ++i) {
    const auto shape = t.context().shapes.find(t.input(i));
    if (!empty(i) && shape != t.context().shapes.end()) like = &shape->second;
  }
  std::vector<int> kept;
  for (int i = 0; i < t.node().input_size(); ++i) {
    if (!empty(i) || like == nullptr) {
      kept.push_back(i);
      continue;
    }
    const auto& dims = constants.at(t.input(i)).dims;
    const auto a = normalize_axis(axis, like->size());
    bool fits = a.has_value() && dims.size() == like->size() && dims[*a] == 0;
    for (std::size_t d = 0; fits && d < dims.size(); ++d) fits = d == *a || dims[d] == (*like)[d];
    if (!fits) {
      t.problem(a ? fmt::format("input {} ('{}') is empty with shape [{}], which does not join [{}] on axis {}", i,
                                t.node().input(i), fmt::join(dims, ", "), fmt::join(*like, ", "), axis)
                  : fmt::format("axis {} is outside the inputs' {} axes", axis, like->size()));
      return {};
    }
  }
  if (kept.empty()) kept.push_back(0);
  return kept;
}

/// Min, Max, Sum and Mean of one or more inputs (numpy broadcasting): a chain of binary ops, Mean's sum then
/// multiplied by 1/n.
void translate_variadic(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx) {
  const Attributes a(node, t.problems(), {});
  if (!t.arity(1, 64, 1)) return;
  const std::string& type = node.op_type();
  const int n = node.input_size();
  const std::string op = type == "Min" ? "min" : type == "Max" ? "max" : "add";
  if (n == 1) {
    ctx.aliases[node.output(0)] = t.input(0);  // one input: itself
    return;
  }
  const std::string& y = node.output(0);
  const bool mean = type == "Mean";
  std::string acc = t.input(0);
  for (int i = 1; i < n; ++i) {
    const bool last = i == n - 1 && !mean;
    const std::string out = last ? y : t.fresh_name(fmt::format("{}/{}{}", y, op, i));
    t.add_op(op, {acc, t.input(i)}, {out});
    acc = out;
  }
  if (mean) {
    Constant scale;
    scale.values = {1.0 / n};
    t.add_op("mul", {acc, t.add_constant(y + "/scale", std::move(scale))}, {y});
  }
}

}  // namespace

DType tensor_dtype(const Context& ctx, const std::string& name) {
  const std::string source = resolve(ctx, name);
  if (const auto c = ctx.constants.find(source); c != ctx.constants.end()) return constant_dtype(c->second);
  if (const auto t = ctx.shadow.find(source)) return ctx.shadow.tensor(*t).dtype;
  if (const auto i = ctx.input_types.find(source); i != ctx.input_types.end()) return i->second;
  return DType::kF16;
}

std::string resolve(const Context& ctx, const std::string& name) {
  std::string current = name;
  for (int hops = 0; hops < 1 << 20; ++hops) {  // aliases point at earlier tensors: no cycle, but stay bounded
    const auto it = ctx.aliases.find(current);
    if (it == ctx.aliases.end()) return current;
    current = it->second;
  }
  return current;
}

Translation translate_node(const onnx::NodeProto& node, Context& ctx) {
  NodeTranslator t(node, ctx);
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    t.problem(fmt::format("domain '{}' is not supported", node.domain()));
    return t.result();
  }
  if (auto folded = fold_node(node, ctx)) return std::move(*folded);
  static const std::map<std::string, std::string> reductions = {{"ReduceSum", "reduce_sum"},
                                                                {"ReduceMean", "reduce_mean"},
                                                                {"ReduceMax", "reduce_max"},
                                                                {"ReduceMin", "reduce_min"}};
  const std::string& type = node.op_type();
  if (type == "Pow" && node.input_size() == 2 && node.output_size() == 1) {
    // ONNX lets Pow's exponent be an integer tensor (T1) with a float base; a constant one is held as fp16 like the
    // base (pow computes on f16 tensors).
    if (const Constant* e = t.small_constant(1); e != nullptr && e->integer && !e->boolean) {
      Constant exponent;
      exponent.dims = e->dims;
      exponent.values = e->values;
      t.add_op("pow", {t.input(0), t.add_constant(node.input(1) + "_f16", std::move(exponent))}, {node.output(0)});
      return t.result();
    }
  }
  if (const OperatorKind* kind = ctx.registry->find_onnx(type)) {  // one to one: the node's inputs, no attributes
    const Attributes a(node, t.problems(), {});
    const Arity arity = kind->arity();
    if (t.arity(static_cast<int>(arity.min_inputs), static_cast<int>(arity.max_inputs),
                static_cast<int>(arity.outputs))) {
      std::vector<int> inputs;
      for (int i = 0; i < node.input_size(); ++i) inputs.push_back(i);
      while (!inputs.empty() && node.input(inputs.back()).empty()) inputs.pop_back();  // trailing optional ones
      t.op(std::string(kind->name()), inputs);
    }
  } else if (const auto r = reductions.find(type); r != reductions.end()) {
    translate_reduce(node, t, ctx, r->second);
  } else if (type == "Conv") {
    if (window_dims(node, ctx) == 1) {
      translate_conv_1d(node, t);
    } else if (window_dims(node, ctx) == 3) {
      translate_conv_3d(node, t);
    } else {
      translate_conv(node, t);
    }
  } else if (type == "TopK") {
    translate_top_k(node, t);
  } else if (type == "Mod") {
    const Attributes a(node, t.problems(), {"fmod"});
    if (t.arity(2, 2, 1)) t.op("mod", {0, 1}, {{"fmod", a.integer("fmod", 0)}});
  } else if (type == "HardSigmoid") {
    const Attributes a(node, t.problems(), {"alpha", "beta"});
    if (t.arity(1, 1, 1)) t.op("hardsigmoid", {0}, {{"alpha", a.real("alpha", 0.2F)}, {"beta", a.real("beta", 0.5F)}});
  } else if (type == "LeakyRelu" || type == "Elu" || type == "Celu" || type == "ThresholdedRelu") {
    static const std::map<std::string, std::pair<std::string, float>> kinds = {
        {"LeakyRelu", {"leaky_relu", 0.01F}},
        {"Elu", {"elu", 1.0F}},
        {"Celu", {"celu", 1.0F}},
        {"ThresholdedRelu", {"thresholded_relu", 1.0F}}};
    const auto& [op, alpha] = kinds.at(type);
    const Attributes a(node, t.problems(), {"alpha"});
    if (t.arity(1, 1, 1)) t.op(op, {0}, {{"alpha", a.real("alpha", alpha)}});
  } else if (type == "Selu") {
    const Attributes a(node, t.problems(), {"alpha", "gamma"});
    if (t.arity(1, 1, 1)) {
      t.op("selu", {0},
           {{"alpha", a.real("alpha", 1.67326319217681884765625F)},
            {"gamma", a.real("gamma", 1.05070102214813232421875F)}});
    }
  } else if (type == "Min" || type == "Max" || type == "Sum" || type == "Mean") {
    translate_variadic(node, t, ctx);
  } else if (type == "IsNaN" || type == "IsInf") {
    translate_special_values(node, t);
  } else if (type == "Slice") {
    translate_slice(node, t);
  } else if (type == "Split") {
    translate_split(node, t, ctx);
  } else if (type == "Pad") {
    translate_pad(node, t);
  } else if (type == "ConvTranspose") {
    translate_conv_transpose(node, t);
  } else if (type == "Resize") {
    translate_resize(node, t, ctx);
  } else if (type == "Einsum") {
    translate_einsum(node, t, ctx);
  } else if (type == "InstanceNormalization") {
    translate_instance_norm(node, t, ctx);
  } else if (type == "DepthToSpace" || type == "SpaceToDepth") {
    translate_depth_space(node, t, type == "DepthToSpace");
  } else if (type == "ReduceL1" || type == "ReduceL2" || type == "ReduceSumSquare" || type == "ReduceLogSumExp") {
    translate_norm_reduction(node, t);
  } else if (type == "Trilu") {
    translate_trilu(node, t);
  } else if (type == "GlobalMaxPool") {
    const Attributes a(node, t.problems(), {});
    const auto* x = t.arity(1, 1, 1) ? t.input_shape(0) : nullptr;
    if (x != nullptr && x->size() < 3) t.problem("needs an input [N, C, spatial...]");
    if (x != nullptr && x->size() >= 3) {
      std::vector<std::int64_t> axes;
      for (std::size_t d = 2; d < x->size(); ++d) axes.push_back(static_cast<std::int64_t>(d));
      t.op("reduce_max", {0}, {{"axes", axes}, {"keepdims", 1}});
    }
  } else if (type == "CumSum") {
    translate_cumsum(node, t);
  } else if (type == "ArgMax" || type == "ArgMin") {
    const Attributes a(node, t.problems(), {"axis", "keepdims", "select_last_index"});
    const auto* shape = t.arity(1, 1, 1) ? t.input_shape(0) : nullptr;
    if (shape != nullptr && tensor_dtype(ctx, t.input(0)) == DType::kI32) {  // CLIP's and GPT-2's pooling position
      if (const auto axis = t.axis(a.integer("axis", 0), shape->size())) {
        arg_of_integers(t, type == "ArgMax", *axis, a.integer("keepdims", 1) != 0,
                        a.integer("select_last_index", 0) != 0);
      }
    } else if (shape != nullptr) {
      t.op(type == "ArgMax" ? "arg_max" : "arg_min", {0},
           {{"axis", a.integer("axis", 0)},
            {"keepdims", a.integer("keepdims", 1)},
            {"select_last_index", a.integer("select_last_index", 0)}});
    }
  } else if (type == "Tile") {
    translate_tile(node, t);
  } else if (type == "LogSoftmax") {
    translate_log_softmax(node, t, ctx);
  } else if (type == "Gemm") {
    const Attributes a(node, t.problems(), {"alpha", "beta", "transA", "transB"});
    if (t.arity(2, 3, 1)) {
      t.op("gemm", t.has_input(2) ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1},
           {{"alpha", a.real("alpha", 1.0F)},
            {"beta", a.real("beta", 1.0F)},
            {"transA", a.integer("transA", 0)},
            {"transB", a.integer("transB", 0)}});
    }
  } else if (type == "MatMul") {
    const Attributes a(node, t.problems(), {});
    if (t.arity(2, 2, 1)) t.op("matmul", {0, 1});
  } else if (type == "MaxPool" || type == "AveragePool") {
    const bool max = type == "MaxPool";
    if (window_dims(node, ctx) == 1) {
      translate_pool_1d(node, t, max);
    } else if (window_dims(node, ctx) == 3) {
      translate_pool_3d(node, t, max);
    } else if (max) {
      translate_pool<true>(node, t);
    } else {
      translate_pool<false>(node, t);
    }
  } else if (type == "GlobalAveragePool") {
    const Attributes a(node, t.problems(), {});
    if (t.arity(1, 1, 1)) t.op("global_avg_pool", {0});
  } else if (type == "BatchNormalization") {
    const Attributes a(node, t.problems(), {"epsilon", "momentum", "training_mode"});
    if (a.integer("training_mode", 0) != 0) t.problem("training_mode 1 is not supported (inference only)");
    if (t.arity(5, 5, 1)) translate_batch_norm(node, t, a.real("epsilon", 1e-5F));
  } else if (type == "Flatten") {
    const Attributes a(node, t.problems(), {"axis"});
    if (t.arity(1, 1, 1)) t.op("flatten", {0}, {{"axis", a.integer("axis", 1)}});
  } else if (type == "Concat") {
    const Attributes a(node, t.problems(), {"axis"});
    if (!a.has("axis")) t.problem("attribute 'axis' is required");
    // torch.stack / torch.cat over a loop's steps give hundreds of inputs: joined in groups of 64 (concat's limit).
    if (t.arity(1, kMaxConcatNodeInputs, 1)) {
      const std::vector<int> inputs = concatenated_inputs(t, a.integer("axis", 1));
      if (inputs.empty()) {  // a problem was recorded
      } else if (inputs.size() == 1 && node.input_size() > 1) {
        ctx.aliases[node.output(0)] = t.input(inputs[0]);  // the others were empty
      } else if (inputs.size() <= 64) {
        t.op("concat", inputs, {{"axis", a.integer("axis", 1)}});
      } else {
        std::vector<std::string> parts;
        for (const int i : inputs) parts.push_back(t.input(i));
        concat_all(t, std::move(parts), a.integer("axis", 1), node.output(0));
      }
    }
  } else if (type == "Clip") {
    translate_clip(node, t);
  } else if (type == "Reshape") {
    translate_reshape(node, t);
  } else if (type == "Softmax") {
    translate_softmax(node, t, ctx);
  } else if (type == "Transpose") {
    const Attributes a(node, t.problems(), {"perm"});
    if (t.arity(1, 1, 1)) {
      const std::vector<std::int64_t> perm = a.integers("perm", {});
      const auto shape = ctx.shapes.find(t.input(0));
      // No perm reverses the axes: nothing moves for a rank-1 input.
      bool identity = !perm.empty() || (shape != ctx.shapes.end() && shape->second.size() <= 1);
      for (std::size_t d = 0; d < perm.size(); ++d) identity = identity && perm[d] == static_cast<std::int64_t>(d);
      if (identity) {
        ctx.aliases[node.output(0)] = t.input(0);  // moves nothing
      } else if (const auto dims =
                     order_keeping_permutation(perm, shape == ctx.shapes.end() ? nullptr : &shape->second)) {
        t.op("reshape", {0}, {{"shape", *dims}});  // only axes of size 1 move (PyTorch's LSTM output at batch 1)
      } else {
        t.op("transpose", {0}, perm.empty() ? nlohmann::json::object() : nlohmann::json{{"perm", perm}});
      }
    }
  } else if (type == "LayerNormalization") {
    const Attributes a(node, t.problems(), {"axis", "epsilon", "stash_type"});
    if (a.integer("stash_type", 1) != 1) t.problem("stash_type other than 1 (fp32 statistics) is not supported");
    if (t.arity(2, 3, 1)) {
      t.op("layer_norm", t.has_input(2) ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1},
           {{"axis", a.integer("axis", -1)}, {"epsilon", a.real("epsilon", 1e-5F)}});
    }
  } else if (type == "RNN") {
    translate_rnn(node, t, ctx);
  } else if (type == "LSTM" || type == "GRU") {
    translate_recurrent(node, t, ctx, type == "LSTM" ? CellKind::kLstm : CellKind::kGru);
  } else if (type == "Constant") {
    translate_constant(node, t);
  } else if (type == "If") {
    t.problem(
        "its condition is computed at run time (only an If whose condition is known at import runs: its branch "
        "is inlined)");
  } else if (type == "Identity" || type == "Dropout") {
    translate_alias(node, t, ctx, type == "Dropout");
  } else {
    t.problem("is not a supported op type (docs/onnx.md lists them)");
  }
  if (!t.problems().empty()) t.result().op = nullptr;
  return t.result();
}

void concat_all(NodeTranslator& t, std::vector<std::string> parts, std::int64_t axis, const std::string& out) {
  constexpr std::size_t kMaxInputs = 64;
  while (parts.size() > kMaxInputs) {
    std::vector<std::string> joined;
    for (std::size_t i = 0; i < parts.size(); i += kMaxInputs) {
      const std::vector<std::string> group(
          parts.begin() + static_cast<std::ptrdiff_t>(i),
          parts.begin() + static_cast<std::ptrdiff_t>(std::min(parts.size(), i + kMaxInputs)));
      joined.push_back(t.fresh_name(out + "/part"));
      t.add_op("concat", group, {joined.back()}, {{"axis", axis}});
    }
    parts = std::move(joined);
  }
  t.add_op("concat", parts, {out}, {{"axis", axis}});
}

}  // namespace ldmsim::onnx_import
