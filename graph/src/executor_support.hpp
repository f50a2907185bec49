// What the plain executor (executor.cpp) and the split executor (split_executor.cpp) share: the checks before a
// run, per-op measurements and the run's summary in stats.json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/graph/executor.hpp"
#include "ldmsim/kernels/constant_pack.hpp"
#include "ldmsim/kernels/staging.hpp"

namespace ldmsim::executor_detail {

/// Refuses, before anything is allocated, a tensor that cannot fit one core group's main memory.
void check_fits(const Graph& graph, const ExecutionPlan& plan, const Arch& arch);

/// Device bytes of live tensors, and their peak.
struct Footprint {
  std::uint64_t live = 0, peak = 0;
  void hold_bytes(std::uint64_t bytes) {
    live += bytes;
    peak = std::max(peak, live);
  }
  void release_bytes(std::uint64_t bytes) { live -= bytes; }
  void hold(const DeviceTensor& t) { hold_bytes(static_cast<std::uint64_t>(t.layout().total) * 2); }
  void release(const DeviceTensor& t) { release_bytes(static_cast<std::uint64_t>(t.layout().total) * 2); }
};

/// An op's constant packs staged in one buffer of a machine's memory (free `base` after the op).
struct PackImage {
  packing::StagedPacks packs;
  DeviceAddr base = 0;
  std::size_t cores = 0;  ///< workers with a pack (identical ones share a staged copy)
};

/// Builds each worker's pack of `plan` from the op's input values (`inputs[i]`: logical values of input i, empty
/// for inputs no entry reads; then the plan's derived constants) and uploads them, each on a transaction boundary,
/// into one buffer of `machine`'s memory (its first group's); workers with identical packs share one copy.
/// Host-side staging: no simulated time.
PackImage stage_packs(Machine& machine, const packing::PackPlan& plan, std::span<const std::span<const f16>> inputs,
                      const std::string& name);

/// An op's entry of stats["ops"]: what the machine did between two snapshots around it, and its layouts.
nlohmann::json op_entry(const OpNode& op, const Machine& machine, const RunStats& s0, const RunStats& s1,
                        std::uint64_t padding_bytes, std::uint64_t live_bytes, nlohmann::json plans);
/// stats.json's run-level fields around the per-op entries.
nlohmann::json run_summary(const Graph& graph, const ExecutionPlan& plan, const Machine& machine,
                           const StagingStats& staging, const Footprint& footprint, std::size_t freed,
                           nlohmann::json relayouts, nlohmann::json ops);

/// Runs `plan` with every split op's pieces on the core groups that hold them (docs/splitting.md).
ExecutionResult execute_split(const Graph& graph, const ExecutionPlan& plan, Machine& machine,
                              const ExecuteOptions& options);

}  // namespace ldmsim::executor_detail
