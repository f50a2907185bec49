// The run's accounting that every placement shares (placement.hpp): the check that tensors fit, staging and
// allocation with their padding and live bytes, and each op's record from machine snapshots around it.
#include <fmt/format.h>

#include "ldmsim/sim/fault.hpp"
#include "placement.hpp"

namespace ldmsim::executor_detail {

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

std::vector<GroupDmaRecord> group_dma_delta(const RunStats& before, const RunStats& after) {
  std::vector<GroupDmaRecord> groups;
  for (std::size_t g = 0; g < after.groups.size(); ++g) {
    const GroupStats& a = before.groups[g];
    const GroupStats& b = after.groups[g];
    groups.push_back({b.dma_requests() - a.dma_requests(), b.dma_bytes() - a.dma_bytes(),
                      b.dma_remote_bytes() - a.dma_remote_bytes()});
  }
  return groups;
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

}  // namespace

DeviceTensor RunState::stage(Machine& on, const std::string& name, const PaddingPlan& p, SharedHalves values) {
  const StagingStats before = staging;
  return held(stage_in(on, name, p, values, &staging), before);
}

DeviceTensor RunState::stage(Machine& on, const std::string& name, const PaddingPlan& p, std::span<const f16> values) {
  const StagingStats before = staging;
  return held(stage_in(on, name, p, values, &staging), before);
}

DeviceTensor RunState::allocate(Machine& on, const std::string& name, const PaddingPlan& p) {
  const StagingStats before = staging;
  return held(allocate_tensor(on, name, p, &staging), before);
}

DeviceTensor RunState::held(const DeviceTensor& t, const StagingStats& before) {
  footprint.hold(t);
  op_padding += staging.bytes_added - before.bytes_added;
  op_staging_seconds += staging.host_seconds - before.host_seconds;
  return t;
}

void RunState::release(const DeviceTensor& t) {
  machine.free(t.ptr);
  footprint.release(t);
}

OpRecord& RunState::record(const OpNode& op, const RunStats& s0, const RunStats& s1,
                           std::map<std::string, std::string> plans) {
  OpRecord& r = ops.emplace_back();
  r.index = op.index;
  r.type = op.type;
  r.name = op.layer();
  r.bound = bound(s0, s1);
  r.peak_fraction = peak_fraction(machine, op.bound->cost().flops, s1.cycles - s0.cycles);
  r.cycles = s1.cycles - s0.cycles;
  r.start_cycle = s0.cycles;
  r.end_cycle = s1.cycles;
  r.seconds = s1.seconds - s0.seconds;
  r.dma_requests = s1.dma_requests() - s0.dma_requests();
  r.dma_bytes = s1.dma_bytes() - s0.dma_bytes();
  r.dma_remote_bytes = s1.dma_remote_bytes() - s0.dma_remote_bytes();
  r.groups = group_dma_delta(s0, s1);
  r.flops = op.bound->cost().flops;
  r.padding_bytes_added = op_padding;
  r.device_bytes_live = footprint.live;
  r.plans = std::move(plans);
  r.metrics = op.bound->run_metrics();
  r.staging_host_seconds = op_staging_seconds;
  op_padding = 0;
  op_staging_seconds = 0;
  return r;
}

OpRecord& RunState::record_hand_over(const OpNode& op, const std::string& tensor, const PaddingPlan& p,
                                     const std::string& from) {
  const RunStats now = machine.stats();
  OpRecord& r = record(op, now, now, {{tensor, p.describe()}});
  r.flops = 0;  // nothing ran
  r.metrics = nullptr;
  r.buffer = fmt::format("handed over from '{}'", from);
  return r;
}

RunSummary RunState::summary(std::size_t freed) const {
  RunSummary r;
  r.machine = machine.stats();
  const RunStats& s = r.machine;
  r.workload = graph.name;
  r.arch = machine.arch().name;
  r.staging = std::string(to_string(plan.policy));
  r.cycles = s.cycles;
  r.seconds = s.seconds;
  r.dma_requests = s.dma_requests();
  r.dma_bytes = s.dma_bytes();
  r.ldm_high_water = s.ldm_high_water();
  r.padding_bytes_added = staging.bytes_added;
  r.padding_bytes_staged = staging.bytes_staged;
  r.peak_tensor_bytes = footprint.peak;
  r.tensor_bytes_without_freeing = plan.bytes_without_freeing;
  r.tensors_freed = freed;
  r.relayouts = relayouts;
  r.staging_host_seconds = staging.host_seconds;
  return r;
}

}  // namespace ldmsim::executor_detail
