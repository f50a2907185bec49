// What a run measured, typed: one record per op (what the machine did between two snapshots around it), one per
// re-layout, and the run's summary. The executor fills them; to_json turns them into stats.json's fields at the edge
// (docs/workload-format.md "stats.json"), and the host-side times, which vary from run to run, into host_times.json.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ldmsim/runtime/stats.hpp"

namespace ldmsim {

/// DMA of one core group during an op.
struct GroupDmaRecord {
  std::uint64_t dma_requests = 0;
  std::uint64_t dma_bytes = 0;
  std::uint64_t dma_remote_bytes = 0;
};

/// How a split op was cut (docs/splitting.md).
struct OpSplitRecord {
  std::string rule;
  int mode = 0;
  std::string parallelism;
  std::size_t pieces = 0;
  std::vector<int> groups;  ///< the core groups that ran pieces
  std::size_t reduction_levels = 0;
};

/// What an estimate is made of, before calibration: the roofline terms of the op's slowest core group (compute,
/// local DMA, remote DMA, launch) and the exchanges its inputs need, each in cycles.
struct CostTerms {
  double compute = 0, local = 0, remote = 0, launch = 0, exchange = 0;
};

/// What the cost-aware choice decided for one op: its placement ("whole" or the split's rule), the estimated cycles
/// of the op with the exchanges its inputs need, and the best other placement it beat (given the same producers).
struct PlacementChoice {
  std::string placement = "whole";
  double estimated_cycles = 0;
  std::string cost_class;  ///< whose calibration coefficients priced it: "conv", "vector-conv" or "other"
  CostTerms terms;         ///< of the chosen placement, uncalibrated
  std::string runner_up;   ///< empty: the op had no other placement
  double runner_up_cycles = 0;
  bool pinned = false;  ///< fixed by the user (SplitOptions::pinned), not chosen
};

/// The constant packs a split op's groups staged.
struct ConstantPackRecord {
  std::uint64_t cores = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
};

/// One op of a run: an entry of stats["ops"].
struct OpRecord {
  std::size_t index = 0;
  std::string type;
  std::string name;            ///< the layer's name (OpNode::layer)
  std::string bound = "none";  ///< what its cores spent most time on: "compute", "dma", "sync" or "none"
  double peak_fraction = 0.0;  ///< its flops over the machine's fp32 peak in its cycles
  Cycle cycles = 0;
  Cycle start_cycle = 0;
  Cycle end_cycle = 0;
  double seconds = 0.0;
  std::uint64_t dma_requests = 0;
  std::uint64_t dma_bytes = 0;
  std::uint64_t dma_remote_bytes = 0;
  std::vector<GroupDmaRecord> groups;  ///< per core group
  std::uint64_t flops = 0;
  std::uint64_t padding_bytes_added = 0;     ///< by staging its inputs and allocating its outputs
  std::uint64_t device_bytes_live = 0;       ///< tensor bytes on the device after it ran
  std::optional<std::string> buffer;         ///< set when the op ran as a buffer hand-over: from which tensor
  std::map<std::string, std::string> plans;  ///< tensor (name@cgN for a split op's pieces) -> its layout
  nlohmann::json metrics;                    ///< BoundOp::run_metrics (null: none)
  std::optional<OpSplitRecord> split;
  std::optional<ConstantPackRecord> constant_packs;
  std::optional<PlacementChoice> placement;  ///< set by the cost-aware choice (`--split auto`)
  /// Host-side (not in stats.json): seconds staging its inputs, and every step since the previous op's.
  double staging_host_seconds = 0.0;
  double host_seconds = 0.0;
};

/// A re-layout between ops: an entry of stats["relayouts"].
struct RelayoutRecord {
  std::string tensor;
  std::size_t before_op = 0;
  std::string from, to;  ///< the layouts
  Cycle cycles = 0;
  Cycle start_cycle = 0;
  Cycle end_cycle = 0;
  std::uint64_t dma_bytes = 0;
};

/// A split run's settings: stats["split"].
struct SplitRunRecord {
  std::string mode = "on";  ///< "on" (the rule) or "auto" (the cost-aware choice)
  std::string rounding;
  bool constant_packs = false;
  std::size_t ops_split = 0;
  double estimated_cycles = 0;  ///< the plan's estimate of the run (the choice's, or the rule's priced)
  /// Constants read by whole ops, held in every core group's memory: how many, and the bytes of their extra copies.
  std::size_t replicated_constants = 0;
  std::uint64_t replicated_bytes = 0;
  /// The placements the run was given (SplitOptions::pinned: op name or label -> placement), so it can be repeated.
  std::map<std::string, std::string> pinned;
};

/// The run as a whole: stats.json's fields around the ops.
struct RunSummary {
  std::string workload, arch, staging;
  Cycle cycles = 0;
  double seconds = 0.0;
  std::uint64_t dma_requests = 0;
  std::uint64_t dma_bytes = 0;
  std::uint64_t ldm_high_water = 0;
  std::uint64_t padding_bytes_added = 0;
  std::uint64_t padding_bytes_staged = 0;
  std::uint64_t peak_tensor_bytes = 0;  ///< of live tensors
  std::uint64_t tensor_bytes_without_freeing = 0;
  std::size_t tensors_freed = 0;
  std::vector<RelayoutRecord> relayouts;
  RunStats machine;
  std::optional<SplitRunRecord> split;  ///< set for a split run
  double staging_host_seconds = 0.0;    ///< host-side (not in stats.json)
  double placement_host_seconds = 0.0;  ///< host-side: choosing the ops' placements (plan_split) before the steps
  bool placement_reused = false;        ///< host-side: the machine's last plan was taken (the same model again)
};

nlohmann::json to_json(const PlacementChoice& choice);
nlohmann::json to_json(const OpRecord& op);
nlohmann::json to_json(const RelayoutRecord& relayout);
/// stats.json as the executor writes it: the summary with `ops` in its "ops".
nlohmann::json to_json(const RunSummary& summary, std::span<const OpRecord> ops);
/// host_times.json: {staging_host_seconds, placement_host_seconds, placement_reused, ops: [{index, type,
/// staging_host_seconds, host_seconds}]}.
nlohmann::json host_times_json(const RunSummary& summary, std::span<const OpRecord> ops);

}  // namespace ldmsim
