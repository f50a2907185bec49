// Layout and padding planning: the padded layout each op wants for each of its tensors, from the op's 4-D view
// and padding class under the staging policy.
#include "ldmsim/graph/plan.hpp"

namespace ldmsim::passes {

void plan_layouts(const Graph& graph, ExecutionPlan& plan) {
  plan.op_plans.clear();
  for (const OpNode& op : graph.ops()) {
    std::vector<PaddingPlan> plans;
    const std::size_t n = op.inputs.size() + op.outputs.size();
    for (std::size_t i = 0; i < n; ++i)
      plans.push_back(choose_plan(op.bound->view(i), op.bound->padding(i), plan.policy));
    plan.op_plans.push_back(std::move(plans));
  }
}

}  // namespace ldmsim::passes
