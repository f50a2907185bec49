// The default pass pipeline and its driver.
#include "ldmsim/graph/plan.hpp"

namespace ldmsim {

std::string_view to_string(Step::Kind kind) noexcept {
  static constexpr std::string_view kNames[] = {"stage", "relayout", "run", "free", "hand-over"};
  return kNames[static_cast<std::size_t>(kind)];
}

std::vector<Pass> default_passes() {
  return {{"validate", passes::validate},
          {"layout", passes::plan_layouts},
          {"liveness", passes::compute_liveness},
          {"schedule", passes::schedule}};
}

ExecutionPlan plan_execution(const Graph& graph, StagingPolicy policy, const std::vector<Pass>& passes) {
  ExecutionPlan plan;
  plan.policy = policy;
  for (const Pass& pass : passes) pass.run(graph, plan);
  return plan;
}

}  // namespace ldmsim
