// The executor: one loop over the plan's steps, carried out by a placement (placement.hpp: the whole machine, or
// pieces split across the core groups), gathering typed records that become stats.json (see executor.hpp).
#include "ldmsim/graph/executor.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"
#include "placement.hpp"
#include "placement_memo.hpp"

namespace ldmsim {

using namespace executor_detail;

std::uint64_t host_memory_bound(const Graph& graph, const ExecutionPlan& plan) {
  std::uint64_t bytes = plan.peak_bytes;
  for (const TensorNode& t : graph.tensors()) {
    // An element count is at most 2^48 (Shape): one term cannot wrap, the sum saturates.
    const std::uint64_t copies = t.is_input() || t.is_output ? 2 * t.logical_bytes() : 0;
    bytes = copies > ~std::uint64_t{0} - bytes ? ~std::uint64_t{0} : bytes + copies;
  }
  return bytes;
}

void check_runnable(const Graph& graph, const ExecutionPlan& plan, const Arch& arch) {
  check_fits(graph, plan, arch);
  for (const OpNode& op : graph.ops()) {
    try {
      op.bound->check_arch(arch);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("op {}: {}", op.layer(), e.what()));
    }
  }
}

ExecutionResult execute(const Graph& graph, Machine& machine, const ExecuteOptions& options) {
  return execute(graph, plan_execution(graph, options.staging), machine, options);
}

namespace {

/// The kernels' estimates the cost-aware placement asked for on a machine (Machine::host_state), and the last plan
/// it made there.
struct PlacementEstimates {
  std::shared_ptr<KernelEstimates> kernels;  ///< the machine's own searches
  PlacementMemo last;
};

/// execute's work, on the thread of the machine's control core.
ExecutionResult execute_here(const Graph& graph, const ExecutionPlan& plan, Machine& machine,
                             const ExecuteOptions& options) {
  check_runnable(graph, plan, machine.arch());
  RunState state(graph, plan, machine, options);
  // The placement's kernel estimates and its last plan stay with the machine: a warm run of the same model takes
  // that plan; another model's plan finds the estimates.
  HostStopwatch planning;
  PlacementEstimates& estimates = machine.host_state<PlacementEstimates>();
  if (!estimates.kernels) estimates.kernels = std::make_shared<KernelEstimates>(machine);
  const SplitPlan* kept = estimates.last.find(graph, plan, options.split);
  const bool placement_reused = kept != nullptr;
  // The machine's host threads also price the placements; a context of a ConcurrentMachine of several contexts (its
  // launches carry the context's name) runs its program on one host thread, whatever the node's thread count.
  const unsigned plan_threads = machine.launch_prefix().empty() ? machine.threads() : 1;
  SplitPlan split = kept != nullptr
                        ? *kept
                        : plan_split(graph, machine.arch(), options.split, &plan, estimates.kernels, plan_threads);
  if (!placement_reused) estimates.last.keep(graph, plan, options.split, split);
  const double placement_seconds = planning.lap();
  // A cost-aware plan that splits nothing runs on the whole machine as `--split off` does, with its constants in
  // every group's memory.
  const bool splits = std::any_of(split.ops.begin(), split.ops.end(), [](const auto& s) { return s.has_value(); });
  const bool several = machine.arch().core_groups > 1;
  const bool whole = !options.split.enabled || !several || (options.split.cost_aware && !splits);
  const std::vector<PlacementChoice> choices = split.choices;
  std::optional<SplitRunRecord> whole_plan;
  if (whole && options.split.enabled && several) {
    whole_plan = SplitRunRecord{"auto", std::string(to_string(split.options.rounding)), split.options.pack_constants, 0,
                                split.estimated_cycles};
    whole_plan->pinned = split.options.pinned;
  }
  const std::unique_ptr<Placement> placement =
      whole ? whole_machine_placement(state, std::move(whole_plan)) : split_placement(state, std::move(split));
  std::size_t freed = 0;
  // An op's host time: every step since the previous op's (its inputs' staging and re-layouts, its run, its
  // progress callbacks). Host times are kept out of stats (not deterministic).
  HostStopwatch op_clock;
  const auto op_done = [&](const OpNode& op) {
    OpRecord& record = state.ops.back();
    if (op.index < choices.size()) record.placement = choices[op.index];
    if (options.on_op) options.on_op(op, record);
    if (options.progress) options.progress(op, to_json(record));
    record.host_seconds = op_clock.lap();
  };
  for (const Step& step : plan.steps) {
    switch (step.kind) {
      case Step::Kind::kStage:
        placement->stage(step);
        break;
      case Step::Kind::kRelayout:
        placement->relayout(step);
        break;
      case Step::Kind::kHandOver:
        placement->hand_over(step);
        op_done(graph.ops()[step.op]);
        break;
      case Step::Kind::kFree:
        placement->free(step);
        ++freed;
        break;
      case Step::Kind::kRun:
        placement->run(graph.ops()[step.op]);
        op_done(graph.ops()[step.op]);
        break;
    }
  }
  ExecutionResult result;
  for (std::size_t t : graph.outputs()) {
    const TensorNode& node = graph.tensor(t);
    result.shapes[node.name] = node.shape;
    result.types[node.name] = node.dtype;
    result.outputs[node.name] = placement->download(t);
  }
  result.summary = state.summary(freed);
  result.summary.placement_host_seconds = placement_seconds;
  result.summary.placement_reused = placement_reused;
  placement->summarize(result.summary);
  result.ops = std::move(state.ops);
  result.stats = to_json(result.summary, result.ops);
  result.host_times = host_times_json(result.summary, result.ops);
  return result;
}

}  // namespace

ExecutionResult execute(const Graph& graph, const ExecutionPlan& plan, Machine& machine,
                        const ExecuteOptions& options) {
  ExecutionResult result;
  machine.run_control([&] { result = execute_here(graph, plan, machine, options); }, options.poll);
  return result;
}

}  // namespace ldmsim
