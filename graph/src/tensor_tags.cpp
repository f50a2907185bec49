// Tensor tags (see tags.hpp, docs/tags.md): categories from roles and degrees, the resident layout from the plan.
#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/graph/tags.hpp"

namespace ldmsim {

namespace {

/// Constants show this many values in full; longer ones their first kShownValues and their count.
constexpr std::size_t kAllValuesUpTo = 8;
constexpr std::size_t kShownValues = 4;

}  // namespace

TensorCategory category_of(const Graph& g, std::size_t t) {
  const TensorNode& n = g.tensor(t);
  if (n.producer) return n.is_output ? TensorCategory::kOutputNeuron : TensorCategory::kHiddenNeuron;
  bool data = false, parameter = false;
  for (const std::size_t op : n.consumers) {
    const OpNode& node = g.ops()[op];
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      if (node.inputs[k] != t) continue;
      const InputRole role = node.bound->input_role(k);
      data = data || role == InputRole::kData;
      parameter = parameter || role == InputRole::kParameter;
    }
  }
  if (!data && !parameter) {  // a graph input that is also an output is data passing through
    if (!n.is_output) return TensorCategory::kAuxiliary;
    data = true;
  }
  const bool weight = !data;  // read as data anywhere: data
  const bool constant = n.init.constant.value_or(weight);
  if (weight) return constant ? TensorCategory::kConstantWeight : TensorCategory::kInputWeight;
  return constant ? TensorCategory::kConstantNeuron : TensorCategory::kInputNeuron;
}

bool is_constant(TensorCategory c) {
  return c == TensorCategory::kConstantNeuron || c == TensorCategory::kConstantWeight;
}

bool is_constant_tensor(const Graph& g, std::size_t t) {
  return !g.tensor(t).producer && is_constant(category_of(g, t));
}

namespace {

StaticTags static_tags(const Graph& g, std::size_t t) {
  const TensorNode& n = g.tensor(t);
  StaticTags s;
  s.category = category_of(g, t);
  s.dtype = n.init.source_f32 ? "fp32" : "fp16";
  s.dims.assign(n.shape.dims().begin(), n.shape.dims().end());
  // Values of constants, and of inputs flagged constant whatever their role (a constant initial state).
  if (!is_constant(s.category) && !(n.init.constant.value_or(false) && !n.producer)) return s;
  s.value_count = n.shape.elements();
  const std::size_t shown = s.value_count <= kAllValuesUpTo ? s.value_count : kShownValues;
  switch (n.init.kind) {
    case TensorInit::Kind::kData:
      s.values_from = "data";
      s.values.resize(shown);
      halves_to_floats(n.init.data.span().first(shown), s.values);
      break;
    case TensorInit::Kind::kValue:
      s.values_from = "value";
      s.values.assign(shown, static_cast<float>(f16(static_cast<float>(n.init.a))));  // as the machine holds it
      break;
    case TensorInit::Kind::kUniform:
      s.values_from = fmt::format("uniform [{}, {}] seed {}", n.init.a, n.init.b, n.init.seed);
      break;
    case TensorInit::Kind::kNormal:
      s.values_from = fmt::format("normal ({}, {}) seed {}", n.init.a, n.init.b, n.init.seed);
      break;
    case TensorInit::Kind::kProduced:
      break;
  }
  return s;
}

/// Padding per dimension of the view, in steps of that dimension ("c=1": one more channel, or one more column
/// of a matrix); where the added elements are not whole steps, their count with an "e" ("n=7e": 7 elements at
/// the end).
std::string padding_text(const PaddingPlan& p) {
  const Layout& l = p.layout;
  const Shape4& s = l.shape;
  std::vector<std::string> parts;
  // Dimension `dim` of extent `extent` whose steps are `step` elements apart inside a span of `pitch` elements.
  const auto add = [&](const char* dim, std::size_t extent, std::size_t step, std::size_t pitch) {
    const std::size_t added = pitch - extent * step;
    if (added == 0) return;
    parts.push_back(step > 0 && added % step == 0 ? fmt::format("{}={}", dim, added / step)
                                                  : fmt::format("{}={}e", dim, added));
  };
  // The view's dimensions from the innermost: w (rank 4), h, c, n; a lower rank names only its own.
  const int rank = std::clamp(s.rank, 1, 4);
  const char* names[4] = {"n", "c", "h", "w"};
  add(names[rank - 1],
      rank == 4   ? s.w
      : rank == 3 ? s.h
      : rank == 2 ? s.c
                  : s.n,
      1,
      rank == 4   ? l.w_pitch
      : rank == 3 ? l.hw_pitch
      : rank == 2 ? l.chw_pitch
                  : l.total);
  if (rank == 4) add("h", s.h, l.w_pitch, l.hw_pitch);
  if (rank >= 3) add("c", s.c, l.hw_pitch, l.chw_pitch);
  if (rank >= 2) add("n", s.n, l.chw_pitch, l.total);
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ";"));
}

/// The tags of a tensor that never reaches main memory, held in `store` ("ldm", or "none" when never read).
DynamicTags not_in_memory(const Shape& shape, const char* store) {
  DynamicTags d;
  d.padding = PaddingPlan{PlanKind::kNone, Layout::natural(Shape4::view_of(shape))};
  d.store = store;
  return d;
}

/// A tensor's stage and re-layout steps: the first one's plan and how many re-layouts (one pass over the steps for
/// every tensor, not one per tensor).
struct StagedSteps {
  const PaddingPlan* first = nullptr;
  std::size_t relayouts = 0;
};

std::vector<StagedSteps> staged_steps(const ExecutionPlan& plan, std::size_t tensors) {
  std::vector<StagedSteps> out(tensors);
  for (const Step& s : plan.steps) {
    if (s.tensor >= tensors || (s.kind != Step::Kind::kStage && s.kind != Step::Kind::kRelayout)) continue;
    if (s.kind == Step::Kind::kRelayout) ++out[s.tensor].relayouts;
    if (out[s.tensor].first == nullptr) out[s.tensor].first = &s.plan;
  }
  return out;
}

DynamicTags dynamic_tags(const Graph& planned, const ExecutionPlan& plan, std::size_t t, const StagedSteps& steps) {
  DynamicTags d;
  const TensorNode& n = planned.tensor(t);
  bool found = false;
  if (n.producer) {
    const OpNode& op = planned.ops()[*n.producer];
    const auto at = std::find(op.outputs.begin(), op.outputs.end(), t) - op.outputs.begin();
    d.padding = plan.op_plans[op.index][op.inputs.size() + static_cast<std::size_t>(at)];
    found = true;
  }
  d.relayouts = steps.relayouts;
  if (!found && steps.first != nullptr) d.padding = *steps.first, found = true;
  if (!found) return not_in_memory(n.shape, "none");  // a graph input no op reads: never staged
  const std::string letters = "nchw";
  d.order = letters.substr(0, static_cast<std::size_t>(std::clamp(d.padding.layout.shape.rank, 1, 4)));
  d.bytes = d.padding.layout.total * 2;
  d.store = "mem0";
  return d;
}

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ","));
}

}  // namespace

std::string_view to_string(TensorCategory category) noexcept {
  switch (category) {
    case TensorCategory::kInputNeuron:
      return "input neuron";
    case TensorCategory::kOutputNeuron:
      return "output neuron";
    case TensorCategory::kHiddenNeuron:
      return "hidden neuron";
    case TensorCategory::kConstantNeuron:
      return "constant neuron";
    case TensorCategory::kInputWeight:
      return "input weight";
    case TensorCategory::kOutputWeight:
      return "output weight";
    case TensorCategory::kConstantWeight:
      return "constant weight";
    case TensorCategory::kAuxiliary:
      return "auxiliary";
  }
  return "?";
}

std::string TensorTags::static_text() const {
  std::string out = fmt::format("static:{},{},{}", to_string(fixed.category), fixed.dtype, dims_text(fixed.dims));
  if (!fixed.values.empty()) {
    out += fmt::format(
        ",values [{}{}]", fmt::join(fixed.values, ","),
        fixed.values.size() < fixed.value_count ? fmt::format(",... {} in all", fixed.value_count) : std::string());
  } else if (!fixed.values_from.empty()) {
    out += fmt::format(",values {}", fixed.values_from);
  }
  return out;
}

std::string TensorTags::dynamic_text() const {
  std::string split = "none";
  const std::string padding = dynamic.split_padding.empty() ? padding_text(dynamic.padding) : dynamic.split_padding;
  if (!dynamic.split_dim.empty()) {
    std::vector<std::string> ranges;
    for (const TensorPiece& p : dynamic.pieces) ranges.push_back(fmt::format("({},{})", p.first, p.last));
    split = fmt::format("{}[{}]", dynamic.split_dim, fmt::join(ranges, ","));
  }
  return fmt::format("dynamic:{},{},tiling {},padding {},size {},split {},{},{}", dynamic.device_dtype, dynamic.order,
                     dynamic.tiling, padding, dynamic.bytes, split, dynamic.store, dynamic.exchange);
}

nlohmann::json TensorTags::to_json() const {
  nlohmann::json s = {{"category", to_string(fixed.category)}, {"dtype", fixed.dtype}, {"dims", fixed.dims}};
  if (!fixed.values.empty()) s["values"] = fixed.values;
  if (fixed.value_count > 0) s["value_count"] = fixed.value_count;
  if (!fixed.values_from.empty()) s["values_from"] = fixed.values_from;
  nlohmann::json pieces = nlohmann::json::array();
  for (const TensorPiece& p : dynamic.pieces)
    pieces.push_back({{"first", p.first}, {"last", p.last}, {"store", p.store}});
  const Layout& l = dynamic.padding.layout;
  nlohmann::json d = {
      {"device_dtype", dynamic.device_dtype},
      {"order", dynamic.order},
      {"tiling", dynamic.tiling},
      {"padding",
       {{"plan", to_string(dynamic.padding.kind)},
        {"text", padding_text(dynamic.padding)},
        {"added_bytes", dynamic.padding.added_bytes()},
        {"pitches", {l.w_pitch, l.hw_pitch, l.chw_pitch}}}},
      {"bytes", dynamic.bytes},
      {"split", dynamic.split_dim.empty() ? nlohmann::json(nullptr) : nlohmann::json(dynamic.split_dim)},
      {"pieces", std::move(pieces)},
      {"store", dynamic.store},
      {"exchange", dynamic.exchange},
      {"relayouts", dynamic.relayouts}};
  return {{"name", name}, {"static", std::move(s)}, {"dynamic", std::move(d)}};
}

namespace {

std::string dim_letter(std::size_t rank, std::size_t axis) {
  const std::string letters = "nchw";
  return rank <= 4 && axis < rank ? letters.substr(axis, 1) : fmt::format("d{}", axis);
}

bool same_pieces(const std::vector<TensorRegion>& a, const std::vector<TensorRegion>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].axis != b[i].axis || a[i].begin != b[i].begin || a[i].end != b[i].end) return false;
  }
  return true;
}

/// The split's tags of operand `k` of split op `s` (its pieces, or the reduced output's core group).
void apply_split(const Graph& planned, const OpSplit& s, std::size_t k, DynamicTags& d) {
  const OpNode& op = planned.ops()[s.op];
  const bool output = k >= op.inputs.size();
  const Shape& shape = planned.tensor(output ? op.outputs[k - op.inputs.size()] : op.inputs[k]).shape;
  if (output && s.axis.reduces) {  // partial results summed by the tree: the sum lands on core group 0
    d.store = "cg";
    d.exchange = s.mode == 1 ? "core" : "cg";
    return;
  }
  const std::vector<TensorRegion>& regions = s.tensor_pieces[k];
  if (regions.empty()) {  // needed whole by every group that runs a piece: a copy in each of their memories
    if (!output && d.store == "mem0") d.store = "mem";
    return;
  }
  const std::size_t axis = regions.front().axis;
  d.split_dim = dim_letter(shape.rank(), axis);
  d.pieces.clear();
  for (std::size_t i = 0; i < regions.size(); ++i) {
    d.pieces.push_back({regions[i].begin, regions[i].end - 1, fmt::format("mem{}", s.pieces[i].group)});
  }
  const std::uint64_t reach = regions.back().end, extent = shape[axis];
  d.tiling = fmt::format("{}={}", d.split_dim, regions.front().end - regions.front().begin);
  if (reach > extent) {  // the rounding policy's padding
    const std::string plan_padding = padding_text(d.padding);
    d.split_padding = fmt::format("{}={}", d.split_dim, reach - extent);
    if (plan_padding != "none") d.split_padding += ";" + plan_padding;
    d.bytes = d.bytes / extent * reach;
  }
  d.store = "mem";
  d.exchange = "no";
}

}  // namespace

std::vector<TensorTags> tensor_tags(const Graph& original, const Graph& planned, const ExecutionPlan& plan,
                                    const SplitPlan* split) {
  std::vector<TensorTags> out;
  const std::vector<StagedSteps> steps = staged_steps(plan, planned.tensors().size());
  for (std::size_t t = 0; t < original.tensors().size(); ++t) {
    TensorTags tags;
    tags.name = original.tensor(t).name;
    tags.fixed = static_tags(original, t);
    if (const auto p = planned.find(tags.name)) {
      tags.dynamic = dynamic_tags(planned, plan, *p, steps[*p]);
    } else {  // a value that fusion keeps inside one kernel
      tags.dynamic = not_in_memory(original.tensor(t).shape, "ldm");
    }
    out.push_back(std::move(tags));
  }
  if (split == nullptr) return out;
  // Producers first, then each tensor's first split consumer; a consumer that wants other pieces than the ones
  // a tensor has (or the whole of a split tensor) makes it move between groups.
  std::vector<const std::vector<TensorRegion>*> held(planned.tensors().size(), nullptr);
  std::vector<bool> placed(planned.tensors().size(), false), moves(planned.tensors().size(), false);
  const auto tag_of = [&](std::size_t t) -> TensorTags* {  // out[i] holds the original graph's tensor i
    const auto i = original.find(planned.tensor(t).name);
    return i ? &out[*i] : nullptr;
  };
  for (const OpNode& op : planned.ops()) {
    const auto& s = split->ops[op.index];
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      const std::size_t t = op.inputs[k];
      if (!s) {
        moves[t] = moves[t] || held[t] != nullptr;
        continue;
      }
      const auto& regions = s->tensor_pieces[k];
      if (placed[t]) {
        const bool differs = held[t] == nullptr ? !regions.empty() : !same_pieces(*held[t], regions);
        moves[t] = moves[t] || differs;
        continue;
      }
      placed[t] = true;
      held[t] = regions.empty() ? nullptr : &regions;
      if (TensorTags* tags = tag_of(t)) apply_split(planned, *s, k, tags->dynamic);
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      const std::size_t t = op.outputs[k];
      placed[t] = true;
      if (!s) continue;
      held[t] = s->axis.reduces || s->tensor_pieces[op.inputs.size() + k].empty()
                    ? nullptr
                    : &s->tensor_pieces[op.inputs.size() + k];
      if (TensorTags* tags = tag_of(t)) apply_split(planned, *s, op.inputs.size() + k, tags->dynamic);
    }
  }
  for (std::size_t t = 0; t < planned.tensors().size(); ++t) {
    TensorTags* tags = tag_of(t);
    if (tags != nullptr && moves[t] && tags->dynamic.exchange == "no") tags->dynamic.exchange = "cg";
  }
  return out;
}

}  // namespace ldmsim
