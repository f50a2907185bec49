// Layout and padding planning: the padded layout each op wants for each of its tensors, from the op's 4-D view
// and padding class under the staging policy. An op that runs in any even layout (element-wise) takes the layout
// that saves a re-layout, since a re-layout reads and writes the whole tensor and an adopted layout costs at
// most its padding:
// - forward: the layout its first same-shape input is produced in, so a chain softmax -> relu -> softmax
//   re-lays nothing out;
// - backward, when its same-shape inputs are graph inputs (staged, not produced): the layout that the first
//   op downstream that is not element-wise wants for the tensor, so the input is staged in that layout at once.
// An input an op reads in any layout (BoundOp::reads_any_layout: conv's X, pools, concat) takes the copy as it lies
// when the op runs (what its producer wrote, or the layout an earlier reader had it re-laid out in), seen on the
// op's own view: a conv's Y with even rows ([K, P*Q] with a padded row pitch) is read as X by the next conv as
// planes with that pitch.
#include <algorithm>
#include <optional>
#include <vector>

#include "../read_as_it_lies.hpp"
#include "ldmsim/graph/plan.hpp"

namespace ldmsim::passes {

namespace {

bool adopts(const OpNode& op) {
  return op.bound->runs_in_producer_layout() && op.outputs.size() == 1;
}

bool same_shape_as_output(const OpNode& op, std::size_t k) {
  return op.bound->input_shapes()[k] == op.bound->output_shapes()[0];
}

/// Gives `op` the layout `p` for its output and its inputs of the output's shape.
void adopt(const OpNode& op, const PaddingPlan& p, std::vector<PaddingPlan>& plans) {
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    if (same_shape_as_output(op, k)) plans[k] = p;
  }
  plans[op.inputs.size()] = p;
}

/// The layout a producer wrote for one of `op`'s same-shape inputs, when its total is even (legal for `op`).
std::optional<PaddingPlan> produced_layout(const OpNode& op, const std::vector<std::optional<PaddingPlan>>& produced) {
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const auto& p = produced[op.inputs[k]];
    if (same_shape_as_output(op, k) && p && p->layout.total % 2 == 0) return p;
  }
  return std::nullopt;
}

/// Following first consumers through element-wise ops from `op`'s output: the plan the first other op wants for
/// the tensor it reads, when its total is even.
std::optional<PaddingPlan> downstream_layout(const Graph& graph, const OpNode& op, const ExecutionPlan& plan) {
  std::size_t tensor = op.outputs[0];
  for (std::size_t hops = 0; hops < graph.ops().size(); ++hops) {
    const TensorNode& t = graph.tensor(tensor);
    if (t.consumers.empty()) return std::nullopt;
    const OpNode& next = graph.ops()[t.consumers.front()];
    const auto k =
        static_cast<std::size_t>(std::find(next.inputs.begin(), next.inputs.end(), tensor) - next.inputs.begin());
    if (!adopts(next) || !same_shape_as_output(next, k)) {
      const PaddingPlan& want = plan.op_plans[next.index][k];
      return want.layout.total % 2 == 0 ? std::optional(want) : std::nullopt;
    }
    tensor = next.outputs[0];
  }
  return std::nullopt;
}

/// Gives each input `op` reads in any layout the copy `resident` says it finds, where read_as_it_lies allows. A
/// tensor the op reads twice keeps its plans: one copy must serve both (schedule refuses two).
void read_resident(const OpNode& op, const std::vector<std::optional<PaddingPlan>>& resident,
                   std::vector<PaddingPlan>& plans) {
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const std::optional<PaddingPlan>& lies = resident[op.inputs[k]];
    if (!lies || !op.bound->reads_any_layout(k) || std::count(op.inputs.begin(), op.inputs.end(), op.inputs[k]) > 1)
      continue;
    if (const std::optional<PaddingPlan> p = read_as_it_lies(*lies, plans[k])) plans[k] = *p;
  }
}

}  // namespace

void plan_layouts(const Graph& graph, ExecutionPlan& plan) {
  plan.op_plans.clear();
  for (const OpNode& op : graph.ops()) {
    std::vector<PaddingPlan> plans;
    const std::size_t n = op.inputs.size() + op.outputs.size();
    for (std::size_t i = 0; i < n; ++i) plans.push_back(tensor_plan(*op.bound, i, plan.policy));
    plan.op_plans.push_back(std::move(plans));
  }
  std::vector<std::optional<PaddingPlan>> produced(graph.tensors().size());
  // Each tensor's device copy after the ops so far, as the schedule keeps it: staged or re-laid out in the layout its
  // reader wanted, else as produced.
  std::vector<std::optional<PaddingPlan>> resident(graph.tensors().size());
  for (const OpNode& op : graph.ops()) {
    auto& plans = plan.op_plans[op.index];
    if (adopts(op)) {
      if (const auto p = produced_layout(op, produced)) {
        adopt(op, *p, plans);
      } else if (const auto d = downstream_layout(graph, op, plan)) {
        adopt(op, *d, plans);
      }
    } else {
      read_resident(op, resident, plans);
    }
    for (std::size_t k = 0; k < op.inputs.size(); ++k) resident[op.inputs[k]] = plans[k];
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      produced[op.outputs[k]] = resident[op.outputs[k]] = plans[op.inputs.size() + k];
    }
  }
}

}  // namespace ldmsim::passes
