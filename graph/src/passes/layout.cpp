// Layout and padding planning: the padded layout each op wants for each of its tensors, from the op's 4-D view
// and padding class under the staging policy. An op that runs in any even layout (element-wise) adopts the
// layout its first same-shape input is produced in, so a chain softmax -> relu -> softmax re-lays nothing out:
// a re-layout reads and writes the whole tensor, the adopted layout costs at most its padding.
#include <optional>

#include "ldmsim/graph/plan.hpp"

namespace ldmsim::passes {

namespace {

/// The layout a producer wrote for one of `op`'s inputs that `op` can adopt for that input, its other inputs of
/// the output's shape and its output; nothing when no input qualifies.
std::optional<PaddingPlan> adoptable_layout(const OpNode& op, const std::vector<std::optional<PaddingPlan>>& produced) {
  if (!op.bound->runs_in_producer_layout() || op.outputs.size() != 1) return std::nullopt;
  const Shape& out = op.bound->output_shapes()[0];
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const auto& p = produced[op.inputs[k]];
    if (op.bound->input_shapes()[k] == out && p && p->layout.total % 2 == 0) return p;
  }
  return std::nullopt;
}

}  // namespace

void plan_layouts(const Graph& graph, ExecutionPlan& plan) {
  plan.op_plans.clear();
  std::vector<std::optional<PaddingPlan>> produced(graph.tensors().size());
  for (const OpNode& op : graph.ops()) {
    std::vector<PaddingPlan> plans;
    const std::size_t n = op.inputs.size() + op.outputs.size();
    for (std::size_t i = 0; i < n; ++i)
      plans.push_back(choose_plan(op.bound->view(i), op.bound->padding(i), plan.policy));
    if (const auto adopted = adoptable_layout(op, produced)) {
      const Shape& out = op.bound->output_shapes()[0];
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        if (op.bound->input_shapes()[k] == out) plans[k] = *adopted;
      }
      plans[op.inputs.size()] = *adopted;
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) produced[op.outputs[k]] = plans[op.inputs.size() + k];
    plan.op_plans.push_back(std::move(plans));
  }
}

}  // namespace ldmsim::passes
