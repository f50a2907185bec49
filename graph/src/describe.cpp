// `ldmsim run --dump-graph`: the graph after the passes, as text.
#include <fmt/format.h>

#include "ldmsim/graph/plan.hpp"

namespace ldmsim {

namespace {

std::string describe_layout(const PaddingPlan& p) {
  return fmt::format("{} (+{} B)", to_string(p.kind), p.added_bytes());
}

}  // namespace

std::string describe(const Graph& graph, const ExecutionPlan& plan) {
  std::string out = fmt::format("graph {}: {} tensors, {} ops, staging {}\n", graph.name, graph.tensors().size(),
                                graph.ops().size(), to_string(plan.policy));
  out += "tensors:\n";
  for (std::size_t t = 0; t < graph.tensors().size(); ++t) {
    const TensorNode& n = graph.tensor(t);
    const std::string role = n.is_input() ? "input" : fmt::format("from op {}", *n.producer);
    const std::string last = n.is_output                  ? "graph output"
                             : plan.last_use[t] == kNoUse ? "unused"
                                                          : fmt::format("last read by op {}", plan.last_use[t]);
    const std::string type = n.dtype == DType::kF16 ? "" : fmt::format(" {}", to_string(n.dtype));
    out += fmt::format("  %{} {} {}{}, {}, {}\n", t, n.name, n.shape.str(), type, role, last);
  }
  out += "ops:\n";
  for (const OpNode& op : graph.ops()) {
    std::vector<std::string> ins, outs;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      ins.push_back(fmt::format("%{} {}", op.inputs[k], describe_layout(plan.op_plans[op.index][k])));
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      outs.push_back(
          fmt::format("%{} {}", op.outputs[k], describe_layout(plan.op_plans[op.index][op.inputs.size() + k])));
    }
    out += fmt::format("  {}{}: ({}) -> ({})\n", op.label(), op.name.empty() ? "" : fmt::format(" '{}'", op.name),
                       fmt::join(ins, ", "), fmt::join(outs, ", "));
  }
  out += "steps:\n";
  for (const Step& s : plan.steps) {
    switch (s.kind) {
      case Step::Kind::kRun:
        out += fmt::format("  run {}\n", graph.ops()[s.op].label());
        break;
      case Step::Kind::kHandOver:
        out += fmt::format("  hand over %{} {} to %{} {} ({}: no kernel)\n", graph.ops()[s.op].inputs[0],
                           graph.tensor(graph.ops()[s.op].inputs[0]).name, s.tensor, graph.tensor(s.tensor).name,
                           graph.ops()[s.op].label());
        break;
      case Step::Kind::kFree:
        out += fmt::format("  free %{} {}\n", s.tensor, graph.tensor(s.tensor).name);
        break;
      default:
        out += fmt::format("  {} %{} {} as {}\n", to_string(s.kind), s.tensor, graph.tensor(s.tensor).name,
                           s.plan.describe());
    }
  }
  out += fmt::format("device memory: peak {} B of tensors ({} B if nothing were freed)\n", plan.peak_bytes,
                     plan.bytes_without_freeing);
  return out;
}

}  // namespace ldmsim
