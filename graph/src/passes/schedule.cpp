// Scheduling: the device steps in order. A graph input is staged in the layout its first consumer wants; a
// consumer that wants another layout than the resident copy's gets a device re-layout (the old copy is freed);
// an op's outputs are allocated when it runs; a tensor is freed right after its last consumer (an output nobody
// reads and that is not a graph output, right after its producer). An op that only reinterprets its input
// (reshape, flatten) hands the buffer over when the input dies there and both layouts place elements alike.
#include <fmt/format.h>

#include <optional>

#include "ldmsim/graph/plan.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::passes {

namespace {

/// An op gets one resident copy of each tensor: one it reads as two inputs that it wants placed differently (a conv's
/// X also its weights or its residual) is refused rather than read through the wrong layout.
void require_one_placement(const Graph& graph, const OpNode& op, const std::vector<PaddingPlan>& wants) {
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    for (std::size_t j = k + 1; j < op.inputs.size(); ++j) {
      if (op.inputs[j] != op.inputs[k] || wants[j].layout.same_placement(wants[k].layout)) continue;
      throw ConfigError(fmt::format(
          "op {} ({}) reads tensor '{}' as inputs {} and {}, which it needs laid out differently ({} and {}); one "
          "buffer cannot be both: pass a copy of it as one of them",
          op.index, op.type, graph.tensor(op.inputs[k]).name, k, j, wants[k].describe(), wants[j].describe()));
    }
  }
}

}  // namespace

void schedule(const Graph& graph, ExecutionPlan& plan) {
  plan.steps.clear();
  std::vector<std::optional<PaddingPlan>> resident(graph.tensors().size());
  std::uint64_t live = 0;
  plan.peak_bytes = plan.bytes_without_freeing = 0;
  auto bytes = [](const PaddingPlan& p) { return static_cast<std::uint64_t>(p.layout.total) * 2; };
  auto hold = [&](const PaddingPlan& p) {
    live += bytes(p);
    plan.bytes_without_freeing += bytes(p);
    plan.peak_bytes = std::max(plan.peak_bytes, live);
  };
  auto release = [&](std::size_t t) {
    live -= bytes(*resident[t]);
    resident[t].reset();
    plan.steps.push_back(Step{Step::Kind::kFree, t, 0, {}});
  };
  for (const OpNode& op : graph.ops()) {
    const auto& wants = plan.op_plans[op.index];
    require_one_placement(graph, op, wants);
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      const std::size_t t = op.inputs[k];
      if (!resident[t]) {
        plan.steps.push_back(Step{Step::Kind::kStage, t, op.index, wants[k]});
        resident[t] = wants[k];
        hold(wants[k]);
      } else if (!resident[t]->layout.same_placement(wants[k].layout)) {
        plan.steps.push_back(Step{Step::Kind::kRelayout, t, op.index, wants[k]});
        hold(wants[k]);
        live -= bytes(*resident[t]);
        resident[t] = wants[k];
      } else {
        resident[t] = wants[k];  // same bytes, viewed through this op's plan
      }
    }
    if (const std::size_t in = op.inputs.front(); op.bound->reinterprets_input() && plan.last_use[in] == op.index &&
                                                  op.inputs.size() == 1 && !graph.tensor(in).is_output &&
                                                  resident[in]->layout.same_placement(wants[1].layout)) {
      plan.steps.push_back(Step{Step::Kind::kHandOver, op.outputs[0], op.index, wants[1]});
      resident[op.outputs[0]] = wants[1];
      resident[in].reset();  // the same bytes live on as the output
      continue;
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      resident[op.outputs[k]] = wants[op.inputs.size() + k];
      hold(wants[op.inputs.size() + k]);
    }
    plan.steps.push_back(Step{Step::Kind::kRun, 0, op.index, {}});
    for (std::size_t t : op.inputs) {
      if (resident[t] && plan.last_use[t] == op.index) release(t);
    }
    for (std::size_t t : op.outputs) {
      if (plan.last_use[t] == kNoUse && !graph.tensor(t).is_output) release(t);
    }
  }
  // Graph outputs no op produced and none read (an input listed as an output) are staged for the download.
  for (std::size_t t : graph.outputs()) {
    if (!resident[t]) {
      const TensorNode& node = graph.tensor(t);
      const PaddingPlan p = plan_unpadded(Shape4::view_of(node.shape), PaddingSpec{});
      plan.steps.push_back(Step{Step::Kind::kStage, t, graph.ops().size(), p});
      resident[t] = p;
      hold(p);
    }
  }
}

}  // namespace ldmsim::passes
