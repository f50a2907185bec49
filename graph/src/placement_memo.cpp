// The last split plan a machine made (see placement_memo.hpp).
#include "placement_memo.hpp"

#include <fmt/format.h>

#include <iterator>

namespace ldmsim::executor_detail {

namespace {

void append_layout(fmt::memory_buffer& out, const PaddingPlan& p) {
  const Layout& l = p.layout;
  fmt::format_to(std::back_inserter(out), "{}:{}x{}x{}x{}/{},{},{},{} ", static_cast<int>(p.kind), l.shape.n, l.shape.c,
                 l.shape.h, l.shape.w, l.w_pitch, l.hw_pitch, l.chw_pitch, l.total);
}

}  // namespace

std::vector<std::shared_ptr<const BoundOp>> PlacementMemo::bound_of(const Graph& graph) {
  std::vector<std::shared_ptr<const BoundOp>> out;
  out.reserve(graph.ops().size());
  for (const OpNode& op : graph.ops()) out.push_back(op.bound);
  return out;
}

std::string PlacementMemo::key_of(const Graph& graph, const ExecutionPlan& plan, const SplitOptions& options) {
  fmt::memory_buffer out;
  const auto put = [&out](const auto&... values) { (fmt::format_to(std::back_inserter(out), "{} ", values), ...); };
  put(options.enabled, static_cast<int>(options.rounding), options.pack_constants, options.cost_aware,
      static_cast<int>(plan.policy), '|');
  for (const auto& [name, label] : options.pinned) put(name.size(), name, label.size(), label);
  put('|');
  for (const OpNode& op : graph.ops()) {
    put(op.type, fmt::format("{}", fmt::join(op.inputs, ",")), fmt::format("{}", fmt::join(op.outputs, ",")),
        op.attrs.dump(), ';');
  }
  put('|');
  for (const TensorNode& t : graph.tensors()) {
    put(t.shape.str(), static_cast<int>(t.dtype), static_cast<int>(t.init.kind),
        t.init.constant ? (*t.init.constant ? 1 : 0) : -1, t.is_output, ';');
  }
  put('|');
  for (const auto& plans : plan.op_plans) {
    for (const PaddingPlan& p : plans) append_layout(out, p);
    put(';');
  }
  put('|');
  for (const Step& step : plan.steps) put(static_cast<int>(step.kind), step.op, step.tensor);
  return fmt::to_string(out);
}

const SplitPlan* PlacementMemo::find(const Graph& graph, const ExecutionPlan& plan, const SplitOptions& options) const {
  if (!split_ || bound_.size() != graph.ops().size()) return nullptr;
  for (std::size_t i = 0; i < bound_.size(); ++i) {
    if (bound_[i] != graph.ops()[i].bound) return nullptr;
  }
  return key_of(graph, plan, options) == key_ ? &*split_ : nullptr;
}

void PlacementMemo::keep(const Graph& graph, const ExecutionPlan& plan, const SplitOptions& options,
                         const SplitPlan& split) {
  bound_ = bound_of(graph);
  key_ = key_of(graph, plan, options);
  split_ = split;
}

}  // namespace ldmsim::executor_detail
