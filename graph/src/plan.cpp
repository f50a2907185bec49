// The default pass pipeline and its driver.
#include "ldmsim/graph/plan.hpp"

#include "ldmsim/sim/enum_names.hpp"

namespace ldmsim {

constexpr auto kStepKindNames = enum_names<Step::Kind>({{Step::Kind::kStage, "stage"},
                                                        {Step::Kind::kRelayout, "relayout"},
                                                        {Step::Kind::kRun, "run"},
                                                        {Step::Kind::kFree, "free"},
                                                        {Step::Kind::kHandOver, "hand-over"}});

std::string_view to_string(Step::Kind kind) noexcept {
  return kStepKindNames.name(kind);
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
