// What the plain executor (executor.cpp) and the split executor (split_executor.cpp) share: the checks before a
// run, per-op measurements and the run's summary in stats.json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/graph/executor.hpp"
#include "ldmsim/kernels/staging.hpp"

namespace ldmsim::executor_detail {

/// Refuses, before anything is allocated, a tensor that cannot fit one core group's main memory.
void check_fits(const Graph& graph, const ExecutionPlan& plan, const Machine& machine);
/// Per core group: DMA requests, bytes and remote bytes between two snapshots.
nlohmann::json group_dma_delta(const RunStats& before, const RunStats& after);
/// "compute", "dma", "sync" or "none": what the cores spent most of the time between two snapshots on.
std::string bound(const RunStats& before, const RunStats& after);
/// An op's flops over what every core could do in its cycles at the fp32 vector peak.
double peak_fraction(const Machine& machine, std::uint64_t flops, Cycle cycles);

/// Device bytes of live tensors, and their peak.
struct Footprint {
  std::uint64_t live = 0, peak = 0;
  void hold(const DeviceTensor& t) {
    live += static_cast<std::uint64_t>(t.layout().total) * 2;
    peak = std::max(peak, live);
  }
  void release(const DeviceTensor& t) { live -= static_cast<std::uint64_t>(t.layout().total) * 2; }
};

/// stats.json's run-level fields around the per-op entries.
nlohmann::json run_summary(const Graph& graph, const ExecutionPlan& plan, const Machine& machine,
                           const StagingStats& staging, const Footprint& footprint, std::size_t freed,
                           nlohmann::json relayouts, nlohmann::json ops);

/// Runs `plan` with every split op's pieces on the core groups that hold them (docs/splitting.md).
ExecutionResult execute_split(const Graph& graph, const ExecutionPlan& plan, Machine& machine,
                              const ExecuteOptions& options);

}  // namespace ldmsim::executor_detail
