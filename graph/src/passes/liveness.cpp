// Liveness: the last op that reads each tensor. Graph outputs stay alive to the end.
#include <algorithm>

#include "ldmsim/graph/plan.hpp"

namespace ldmsim::passes {

void compute_liveness(const Graph& graph, ExecutionPlan& plan) {
  plan.last_use.assign(graph.tensors().size(), kNoUse);
  for (std::size_t t = 0; t < graph.tensors().size(); ++t) {
    const TensorNode& node = graph.tensor(t);
    if (node.is_output) continue;
    if (!node.consumers.empty()) plan.last_use[t] = *std::max_element(node.consumers.begin(), node.consumers.end());
  }
}

}  // namespace ldmsim::passes
