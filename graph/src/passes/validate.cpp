// Validation pass: what construction cannot check alone (a graph is otherwise valid by construction).
#include <fmt/format.h>

#include "ldmsim/graph/plan.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::passes {

void validate(const Graph& graph, ExecutionPlan&) {
  if (graph.outputs().empty()) throw ConfigError(fmt::format("{}: the graph has no outputs", graph.name));
  for (const TensorNode& t : graph.tensors()) {
    if (!t.is_input() && !t.producer)
      throw ConfigError(fmt::format("tensor '{}': neither initialized nor produced", t.name));
  }
}

}  // namespace ldmsim::passes
