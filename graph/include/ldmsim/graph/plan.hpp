// The pass pipeline: turns a Graph into an ExecutionPlan, the ordered device steps the executor follows.
// Passes run in order on (graph, plan): validation, layout and padding planning (the layout each op wants for
// each tensor), liveness (each tensor's last use) and scheduling (staging of graph inputs, device re-layouts
// where a consumer wants another layout than the resident one, op runs, frees right after a tensor's last use).
// Fusion and splitting will be further passes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ldmsim/graph/graph.hpp"
#include "ldmsim/kernels/padding.hpp"

namespace ldmsim {

/// One step of an execution plan.
struct Step {
  enum class Kind : std::uint8_t {
    kStage,     ///< upload a graph input in `plan`'s layout (the only host-to-device copy)
    kRelayout,  ///< copy a resident tensor into `plan`'s layout with a device kernel, free the old copy
    kRun,       ///< run op `op` (its outputs are allocated in their planned layouts first)
    kFree,      ///< free a tensor whose last consumer has run
    kHandOver,  ///< op `op` reinterprets its dying input: its output `tensor` takes the input's buffer, no kernel
  };
  Kind kind = Kind::kRun;
  std::size_t tensor = 0;
  std::size_t op = 0;
  PaddingPlan plan;
};
std::string_view to_string(Step::Kind kind) noexcept;

inline constexpr std::size_t kNoUse = std::numeric_limits<std::size_t>::max();

struct ExecutionPlan {
  StagingPolicy policy = StagingPolicy::kMethod;
  /// Per op: the plan of each input, then of each output.
  std::vector<std::vector<PaddingPlan>> op_plans;
  /// Per tensor: the index of the last op reading it; kNoUse when none reads it; graph outputs live to the end.
  std::vector<std::size_t> last_use;
  std::vector<Step> steps;
  /// Peak bytes of live device tensors along the steps, and the bytes if nothing were ever freed.
  std::uint64_t peak_bytes = 0;
  std::uint64_t bytes_without_freeing = 0;
};

struct Pass {
  std::string name;
  std::function<void(const Graph&, ExecutionPlan&)> run;
};

/// validate, layout, liveness, schedule.
std::vector<Pass> default_passes();
/// Runs `passes` on a fresh plan for `policy`.
ExecutionPlan plan_execution(const Graph& graph, StagingPolicy policy,
                             const std::vector<Pass>& passes = default_passes());
/// The graph after the passes, for `ldmsim run --dump-graph`: tensors, ops with their layouts, and the steps.
std::string describe(const Graph& graph, const ExecutionPlan& plan);

namespace passes {
void validate(const Graph& graph, ExecutionPlan& plan);
void plan_layouts(const Graph& graph, ExecutionPlan& plan);
void compute_liveness(const Graph& graph, ExecutionPlan& plan);
void schedule(const Graph& graph, ExecutionPlan& plan);
}  // namespace passes

}  // namespace ldmsim
