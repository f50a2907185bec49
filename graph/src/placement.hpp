// Private to the executor: one step loop (executor.cpp) over a placement strategy, which decides where each tensor
// lives and which core groups run each op: the whole machine (whole_machine_placement.cpp), or pieces split across
// the core groups' memories (split_placement.cpp, docs/splitting.md). What every placement shares is the run's
// accounting (RunState): staging and padding, live device bytes, and the per-op records.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

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

/// The run's accounting, shared by the step loop and its placement.
struct RunState {
  RunState(const Graph& g, const ExecutionPlan& p, Machine& m, const ExecuteOptions& o)
      : graph(g), plan(p), machine(m), options(o) {}
  const Graph& graph;
  const ExecutionPlan& plan;
  Machine& machine;
  const ExecuteOptions& options;
  StagingStats staging;
  Footprint footprint;
  std::vector<OpRecord> ops;
  std::vector<RelayoutRecord> relayouts;
  /// Padding bytes added and host seconds spent staging since the last op's record: the next op's.
  std::uint64_t op_padding = 0;
  double op_staging_seconds = 0;

  /// Stages `values` into a tensor of `on`'s memory (held), counted as the next op's staging.
  DeviceTensor stage(Machine& on, const std::string& name, const PaddingPlan& plan, SharedHalves values);
  DeviceTensor stage(Machine& on, const std::string& name, const PaddingPlan& plan, std::span<const f16> values);
  /// Allocates a tensor in `on`'s memory (held), its padding counted as the next op's.
  DeviceTensor allocate(Machine& on, const std::string& name, const PaddingPlan& plan);
  /// Frees a tensor this run allocated.
  void release(const DeviceTensor& t);
  /// Appends op's record: what the machine did between snapshots s0 and s1, with the staging since the last record.
  OpRecord& record(const OpNode& op, const RunStats& s0, const RunStats& s1, std::map<std::string, std::string> plans);
  /// Appends the record of an op that ran as a hand-over of `from`'s buffer (no cycles, no DMA).
  OpRecord& record_hand_over(const OpNode& op, const std::string& tensor, const PaddingPlan& plan,
                             const std::string& from);
  /// The run-level record (the placement adds its own fields).
  RunSummary summary(std::size_t freed) const;

 private:
  /// `t`, made since `before`, held and its staging counted as the next op's.
  DeviceTensor held(const DeviceTensor& t, const StagingStats& before);
};

/// Where tensors live and which groups run each op: the steps of the plan, carried out.
class Placement {
 public:
  virtual ~Placement() = default;
  /// A graph input's values onto the device.
  virtual void stage(const Step& step) = 0;
  /// A tensor into the layout its next consumer wants.
  virtual void relayout(const Step& step) = 0;
  /// An op whose output takes its input's buffer; appends its record.
  virtual void hand_over(const Step& step) = 0;
  /// Frees every device copy of a dead tensor.
  virtual void free(const Step& step) = 0;
  /// Runs an op; appends its record.
  virtual void run(const OpNode& op) = 0;
  /// A graph output's logical values.
  virtual std::vector<f16> download(std::size_t tensor) = 0;
  /// Adds what the placement itself reports to the run's summary.
  virtual void summarize(RunSummary& /*summary*/) const {}
};

/// Every op runs on every core group, with its tensors in one placement each (the plan's). With `plan` (a cost-aware
/// plan that splits nothing, on a machine of several groups) constants also have a copy in every group's memory, and
/// the run's summary records the plan.
std::unique_ptr<Placement> whole_machine_placement(RunState& state, std::optional<SplitRunRecord> plan = std::nullopt);
/// Split ops run one sub-op per core group on that group's pieces (docs/splitting.md).
std::unique_ptr<Placement> split_placement(RunState& state, SplitPlan split);

/// Each core group's DMA between two snapshots.
std::vector<GroupDmaRecord> group_dma_delta(const RunStats& before, const RunStats& after);

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

}  // namespace ldmsim::executor_detail
