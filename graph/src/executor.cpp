// The executor: follows the plan's steps on the machine and gathers stats.json (see executor.hpp).
#include "ldmsim/graph/executor.hpp"

#include <fmt/format.h>

#include <optional>

#include "executor_support.hpp"
#include "ldmsim/kernels/relayout.hpp"
#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"

namespace ldmsim {

namespace executor_detail {

using nlohmann::json;

namespace {
json group_dma(const RunStats& s) {
  json out = json::array();
  for (const auto& g : s.groups) {
    out.push_back(
        {{"dma_requests", g.dma_requests()}, {"dma_bytes", g.dma_bytes()}, {"dma_remote_bytes", g.dma_remote_bytes()}});
  }
  return out;
}
}  // namespace

json group_dma_delta(const RunStats& before, const RunStats& after) {
  json groups = group_dma(after);
  const json g0 = group_dma(before);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const char* key : {"dma_requests", "dma_bytes", "dma_remote_bytes"}) {
      groups[g][key] = groups[g][key].get<std::uint64_t>() - g0[g][key].get<std::uint64_t>();
    }
  }
  return groups;
}

/// Refuses, before anything is allocated, a tensor that cannot fit one core group's main memory.
void check_fits(const Graph& graph, const ExecutionPlan& plan, const Arch& arch) {
  const std::uint64_t capacity = arch.main_memory_bytes_per_cg;
  auto check = [&](std::size_t t, const PaddingPlan& p) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(p.layout.total) * 2;
    if (bytes > capacity) {
      throw ConfigError(
          fmt::format("tensor '{}' {} needs {} bytes, more than the {} bytes of main memory of a core "
                      "group on {}",
                      graph.tensor(t).name, graph.tensor(t).shape.str(), bytes, capacity, arch.name));
    }
  };
  for (const Step& s : plan.steps) {
    if (s.kind == Step::Kind::kStage || s.kind == Step::Kind::kRelayout) check(s.tensor, s.plan);
  }
  for (const OpNode& op : graph.ops()) {
    for (std::size_t k = 0; k < op.outputs.size(); ++k)
      check(op.outputs[k], plan.op_plans[op.index][op.inputs.size() + k]);
  }
}

namespace {
/// The machine's core counters summed over every core: an op's bound is read from their change across it.
struct CoreTotals {
  Cycle busy = 0, dma_wait = 0, barrier_wait = 0;
  explicit CoreTotals(const RunStats& s) {
    for (const GroupStats& g : s.groups) {
      for (const CoreStats& c : g.cores)
        busy += c.busy_cycles, dma_wait += c.dma_wait_cycles, barrier_wait += c.barrier_wait_cycles;
    }
  }
};

}  // namespace

/// What an op's cores spent most of their time on between two snapshots: "compute" (busy: arithmetic and DMA
/// issue), "dma" (waiting for transfers) or "sync" (waiting at barriers); "none" when no core ran.
std::string bound(const RunStats& before, const RunStats& after) {
  const CoreTotals a(before), b(after);
  const Cycle busy = b.busy - a.busy, dma = b.dma_wait - a.dma_wait, sync = b.barrier_wait - a.barrier_wait;
  if (busy == 0 && dma == 0 && sync == 0) return "none";
  if (dma >= busy && dma >= sync) return "dma";
  return sync > busy ? "sync" : "compute";
}

/// An op's flops over what every core of the machine could do in its cycles at the fp32 vector peak (the type
/// the kernels accumulate in).
double peak_fraction(const Machine& machine, std::uint64_t flops, Cycle cycles) {
  const double peak = machine.arch().compute.peak_flops_per_cycle(DataType::kF32) * machine.arch().total_cores();
  return cycles == 0 || peak <= 0 ? 0.0 : static_cast<double>(flops) / (peak * static_cast<double>(cycles));
}

/// f(), with a ConfigError (main memory full) naming the op whose step it is.
template <typename F>
auto for_op(const Graph& graph, std::size_t op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const ConfigError& e) {
    if (op >= graph.ops().size()) throw;
    throw ConfigError(fmt::format("op {} ({}): {}", graph.ops()[op].layer(), graph.ops()[op].type, e.what()));
  }
}

}  // namespace executor_detail

using namespace executor_detail;

std::uint64_t host_memory_bound(const Graph& graph, const ExecutionPlan& plan) {
  std::uint64_t bytes = plan.peak_bytes;
  for (const TensorNode& t : graph.tensors()) {
    // An element count is at most 2^48 (Shape): one term cannot wrap, the sum saturates.
    const std::uint64_t copies = t.is_input() || t.is_output ? 4 * t.shape.elements() : 0;
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

ExecutionResult execute(const Graph& graph, const ExecutionPlan& plan, Machine& machine,
                        const ExecuteOptions& options) {
  check_runnable(graph, plan, machine.arch());
  if (options.split.enabled && machine.arch().core_groups > 1) return execute_split(graph, plan, machine, options);
  StagingStats staging;
  Footprint footprint;
  std::vector<std::optional<DeviceTensor>> device(graph.tensors().size());
  json ops = json::array(), relayouts = json::array();
  StagingStats op_staging;  // staging of the op about to run (its inputs' uploads, its outputs' allocations)
  std::size_t freed = 0;
  nlohmann::json host_ops = nlohmann::json::array();  // host-side times: kept out of stats (not deterministic)
  // An op's host time: every step since the previous op's (its inputs' staging and re-layouts, its run, its
  // progress line), as the split executor counts it.
  HostStopwatch op_clock;
  for (const Step& step : plan.steps) {
    const TensorNode& node = graph.tensor(step.tensor);
    switch (step.kind) {
      case Step::Kind::kStage: {
        const StagingStats before = staging;
        device[step.tensor] = for_op(
            graph, step.op, [&] { return stage_in(machine, node.name, step.plan, initial_values(node), &staging); });
        footprint.hold(*device[step.tensor]);
        op_staging.host_seconds += staging.host_seconds - before.host_seconds;
        op_staging.bytes_added += staging.bytes_added - before.bytes_added;
        break;
      }
      case Step::Kind::kRelayout: {
        const DeviceTensor from = *device[step.tensor];
        const StagingStats before = staging;
        const DeviceTensor to =
            for_op(graph, step.op, [&] { return allocate_tensor(machine, node.name, step.plan, &staging); });
        op_staging.bytes_added += staging.bytes_added - before.bytes_added;
        footprint.hold(to);
        const RunStats s0 = machine.stats();
        const std::string label = fmt::format("relayout:{}", node.name);
        relayout(machine, from, to, label);
        const RunStats s1 = machine.stats();
        relayouts.push_back({{"tensor", node.name},
                             {"before_op", step.op},
                             {"from", from.plan.describe()},
                             {"to", to.plan.describe()},
                             {"cycles", s1.cycles - s0.cycles},
                             {"start_cycle", s0.cycles},
                             {"end_cycle", s1.cycles},
                             {"dma_bytes", s1.dma_bytes() - s0.dma_bytes()}});
        machine.free(from.ptr);
        footprint.release(from);
        device[step.tensor] = to;
        break;
      }
      case Step::Kind::kHandOver: {
        const OpNode& op = graph.ops()[step.op];
        DeviceTensor t = *device[op.inputs[0]];
        device[op.inputs[0]].reset();
        t.name = node.name;
        t.plan = step.plan;
        device[step.tensor] = t;
        ops.push_back({{"index", op.index},
                       {"type", op.type},
                       {"name", op.layer()},
                       {"bound", "none"},
                       {"peak_fraction", 0.0},
                       {"cycles", 0},
                       {"start_cycle", machine.stats().cycles},
                       {"end_cycle", machine.stats().cycles},
                       {"seconds", 0.0},
                       {"dma_requests", 0},
                       {"dma_bytes", 0},
                       {"dma_remote_bytes", 0},
                       {"groups", group_dma_delta(machine.stats(), machine.stats())},
                       {"flops", 0},
                       {"padding_bytes_added", op_staging.bytes_added},
                       {"device_bytes_live", footprint.live},
                       {"buffer", fmt::format("handed over from '{}'", graph.tensor(op.inputs[0]).name)},
                       {"plans", {{t.name, step.plan.describe()}}}});
        host_ops.push_back({{"index", op.index},
                            {"type", op.type},
                            {"staging_host_seconds", op_staging.host_seconds},
                            {"host_seconds", 0.0}});
        op_staging = {};
        if (options.progress) options.progress(op, ops.back());
        host_ops.back()["host_seconds"] = op_clock.lap();
        break;
      }
      case Step::Kind::kFree:
        machine.free(device[step.tensor]->ptr);
        footprint.release(*device[step.tensor]);
        device[step.tensor].reset();
        ++freed;
        break;
      case Step::Kind::kRun: {
        const OpNode& op = graph.ops()[step.op];
        const auto& plans = plan.op_plans[op.index];
        json layouts = json::object();
        std::vector<DeviceTensor> in, out;
        for (std::size_t k = 0; k < op.inputs.size(); ++k) {
          DeviceTensor t = *device[op.inputs[k]];
          t.plan = plans[k];  // the same placement, seen through this op's plan
          in.push_back(t);
          layouts[t.name] = plans[k].describe();
        }
        for (std::size_t k = 0; k < op.outputs.size(); ++k) {
          const std::size_t t = op.outputs[k];
          const StagingStats before = staging;
          device[t] = for_op(graph, op.index, [&] {
            return allocate_tensor(machine, graph.tensor(t).name, plans[op.inputs.size() + k], &staging);
          });
          op_staging.bytes_added += staging.bytes_added - before.bytes_added;
          op_staging.host_seconds += staging.host_seconds - before.host_seconds;
          footprint.hold(*device[t]);
          out.push_back(*device[t]);
          layouts[device[t]->name] = plans[op.inputs.size() + k].describe();
        }
        const RunStats s0 = machine.stats();
        op.bound->run(machine, in, out, op.label());
        const RunStats s1 = machine.stats();
        ops.push_back(op_entry(op, machine, s0, s1, op_staging.bytes_added, footprint.live, std::move(layouts)));
        host_ops.push_back({{"index", op.index},
                            {"type", op.type},
                            {"staging_host_seconds", op_staging.host_seconds},
                            {"host_seconds", 0.0}});
        op_staging = {};
        if (options.progress) options.progress(op, ops.back());
        host_ops.back()["host_seconds"] = op_clock.lap();
        break;
      }
    }
  }
  ExecutionResult result;
  for (std::size_t t : graph.outputs()) {
    const TensorNode& node = graph.tensor(t);
    result.shapes[node.name] = node.shape;
    result.outputs[node.name] = stage_out(machine, *device[t], &staging);
  }
  result.stats = run_summary(graph, plan, machine, staging, footprint, freed, relayouts, ops);
  result.host_times = {{"staging_host_seconds", staging.host_seconds}, {"ops", host_ops}};
  return result;
}

namespace executor_detail {

json op_entry(const OpNode& op, const Machine& machine, const RunStats& s0, const RunStats& s1,
              std::uint64_t padding_bytes, std::uint64_t live_bytes, json plans) {
  json entry = {{"index", op.index},
                {"type", op.type},
                {"name", op.layer()},
                {"bound", bound(s0, s1)},
                {"peak_fraction", peak_fraction(machine, op.bound->cost().flops, s1.cycles - s0.cycles)},
                {"cycles", s1.cycles - s0.cycles},
                {"start_cycle", s0.cycles},
                {"end_cycle", s1.cycles},
                {"seconds", s1.seconds - s0.seconds},
                {"dma_requests", s1.dma_requests() - s0.dma_requests()},
                {"dma_bytes", s1.dma_bytes() - s0.dma_bytes()},
                {"dma_remote_bytes", s1.dma_remote_bytes() - s0.dma_remote_bytes()},
                {"groups", group_dma_delta(s0, s1)},
                {"flops", op.bound->cost().flops},
                {"padding_bytes_added", padding_bytes},
                {"device_bytes_live", live_bytes},
                {"plans", std::move(plans)}};
  if (json metrics = op.bound->run_metrics(); !metrics.is_null()) entry["metrics"] = std::move(metrics);
  return entry;
}

json run_summary(const Graph& graph, const ExecutionPlan& plan, const Machine& machine, const StagingStats& staging,
                 const Footprint& footprint, std::size_t freed, json relayouts, json ops) {
  const RunStats s = machine.stats();
  return {{"workload", graph.name},
          {"arch", machine.arch().name},
          {"staging", to_string(plan.policy)},
          {"cycles", s.cycles},
          {"seconds", s.seconds},
          {"dma_requests", s.dma_requests()},
          {"dma_bytes", s.dma_bytes()},
          {"ldm_high_water", s.ldm_high_water()},
          {"padding", {{"bytes_added", staging.bytes_added}, {"bytes_staged", staging.bytes_staged}}},
          {"device_memory",
           {{"peak_tensor_bytes", footprint.peak},
            {"tensor_bytes_without_freeing", plan.bytes_without_freeing},
            {"tensors_freed", freed}}},
          {"relayouts", std::move(relayouts)},
          {"ops", std::move(ops)},
          {"machine", s.to_json(false)}};
}

}  // namespace executor_detail

}  // namespace ldmsim
