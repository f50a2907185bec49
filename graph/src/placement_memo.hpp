// A warm run's placement (executor.cpp): the split plan a machine made last, kept with everything it was made from,
// so that running the same model again on that machine searches nothing (a Session's warm runs).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/graph/graph.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/graph/split.hpp"

namespace ldmsim::executor_detail {

class PlacementMemo {
 public:
  /// The plan kept for this graph, execution plan and options (on this memo's machine), or nullptr.
  const SplitPlan* find(const Graph& graph, const ExecutionPlan& plan, const SplitOptions& options) const;
  /// Keeps `split` as the plan for these, in place of the one kept before.
  void keep(const Graph& graph, const ExecutionPlan& plan, const SplitOptions& options, const SplitPlan& split);

 private:
  /// What the plan depends on besides the graph's bound ops: options, ops, tensors, layouts and steps.
  static std::string key_of(const Graph& graph, const ExecutionPlan& plan, const SplitOptions& options);
  static std::vector<std::shared_ptr<const BoundOp>> bound_of(const Graph& graph);

  /// The graph's ops, held: while they are, no other op has their addresses, so equal pointers are the same ops.
  std::vector<std::shared_ptr<const BoundOp>> bound_;
  std::string key_;
  std::optional<SplitPlan> split_;
};

}  // namespace ldmsim::executor_detail
