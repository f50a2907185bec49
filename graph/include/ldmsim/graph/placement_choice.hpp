// The cost-aware placement choice (`--split auto`, docs/splitting.md "The cost-aware choice"): every op's placements
// (whole on every core group with its tensors in group 0's memory, or split along one of its splittable dimensions
// as the rule cuts it) are priced with the arch's timing model, and a dynamic programme over the schedule picks the
// plan whose sum of op estimates and exchanges between consecutive placements is least.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/graph/placement_calibration.hpp"
#include "ldmsim/graph/split.hpp"
#include "ldmsim/sim/flat_memo.hpp"

namespace ldmsim {

/// Where one tensor is held after its producer ran: whole in group 0's memory, or one region per group.
struct TensorHolding {
  bool whole = true;
  std::vector<std::optional<TensorRegion>> groups;  ///< per core group when !whole; nullopt: that group holds none
};

/// What a group's share of an op moves and computes.
struct GroupLoad {
  double flops = 0;
  double read_bytes = 0;    ///< every byte the group's cores read (local and remote)
  double write_bytes = 0;   ///< every byte they write
  double remote_bytes = 0;  ///< of those, the bytes in another group's memory
};

/// An estimate: its cycles (calibrated) and the roofline terms they came from.
struct Estimate {
  double cycles = 0;
  CostTerms terms;
};

/// The arch's prices, from its own parameters: the DMA timing model's service of a typical request (local
/// bandwidth with the request overhead, over its channels), the remote link's rate, the vector units' peak, and what
/// a launch costs before and after its work (the DMA latency of its first read and last write, a node barrier).
/// On a preset, each term is scaled by the factor fitted to its simulated runs (placement_calibration.hpp).
class PlacementCostModel {
 public:
  /// `calibrated` false: the plain roofline even on a preset. `kernels`: where the kernels' own estimates are kept
  /// (null: a memo of its own).
  explicit PlacementCostModel(const Arch& arch, bool calibrated = true,
                              std::shared_ptr<KernelEstimates> kernels = nullptr);
  /// Estimated cycles of `op` run whole: every group, its tensors in group 0's memory.
  Estimate whole(const Graph& graph, const OpNode& op) const;
  /// Estimated cycles of `op` split as `s` (each group its block; a reduction's tree of adds across groups).
  Estimate split(const Graph& graph, const OpNode& op, const OpSplit& s) const;
  /// Cycles to give each group `need[g]` of tensor `t` (nullopt: nothing) when it is held as `held`: one gather per
  /// group that lacks a copy of exactly its region, the groups in parallel; for a whole op (`whole_machine`), its
  /// input gathered into group 0's memory by every group, a share each. With `relayout` (the consumer wants `t` in
  /// another layout than its producer wrote), a copy read in place is re-laid out where it is. With `reader` (the
  /// op that needs `t`), rows its pieces read in place from a whole copy (rows_in_place) cost no gather: their link
  /// time, and their runs' cost to the engine over that of typical requests; channels its pieces read in place
  /// (channels_in_place, under the split rule `reader_rule`) their link time alone.
  Estimate exchange(const Graph& graph, std::size_t t, const TensorHolding& held,
                    const std::vector<std::optional<TensorRegion>>& need, bool whole_machine = false,
                    bool relayout = false, const OpNode* reader = nullptr, std::string_view reader_rule = {}) const;
  /// Whose factors price `op`.
  static CostClass cost_class(const Graph& graph, const OpNode& op);
  const Arch& arch() const { return arch_; }

 private:
  /// Bytes per cycle of the group's DMA engine for requests of `block` contiguous bytes (over its channels).
  double rate(DmaOp op, double block) const;
  /// rate() of a request length: the search prices tens of thousands of exchanges with a few hundred lengths.
  double priced_rate(DmaOp op, std::uint64_t length) const;
  /// One launch on a group with `load` (compute and DMA overlap; the remote link is the group's own), its terms
  /// scaled by `cls`'s factors. With `kernel` (the kernel's own estimate of its local work), that is the compute
  /// term and there is no local one: the kernel priced its compute and local DMA together.
  Estimate priced(const GroupLoad& load, CostClass cls, std::optional<double> kernel = std::nullopt) const;
  /// What a piece of rows written into one output (rows_into_one) adds to its kernel's estimate: its store's
  /// shorter puts, and their link time where the output is in another group's memory (`remote`).
  Estimate rows_into_one_store(const Graph& graph, const OpNode& op, const TensorRegion& rows, const GroupLoad& load,
                               bool remote) const;
  /// The kernel's own estimate of `bound` on `arch` (convs on the matrix engine), else nullopt.
  std::optional<double> kernel_cycles(const BoundOp& bound, CostClass cls, const Arch& arch) const;

  Arch arch_;
  Arch group_arch_;                                  ///< one of its core groups (a split's piece runs on one)
  std::optional<PlacementCalibration> calibration_;  ///< nullopt: the plain roofline
  std::shared_ptr<KernelEstimates> kernels_;         ///< the kernels' estimates so far (shared by copies)
  std::shared_ptr<const TimingModel> timing_;
  double read_bytes_per_cycle_ = 1, write_bytes_per_cycle_ = 1, remote_bytes_per_cycle_ = 0;
  double launch_cycles_ = 0, matrix_flops_per_cycle_ = 1, flops_per_cycle_ = 1;
  /// priced_rate's, by length * 2 + (op is a put; DmaOp has no third value). Mutable, so a model is not for
  /// several threads at once (the search prices on the control core alone).
  mutable FlatMemo<std::uint64_t, double> rates_;
};

/// The bytes the op's group reads from tensor operand `k` when it holds `region` of it (weights of a matrix op are
/// read once per block of output columns the group's ldm holds; the rest once).
GroupLoad piece_load(const Graph& graph, const OpNode& op, const std::vector<TensorRegion>& regions, double fraction);

/// Chooses every op's placement of `plan` (options.cost_aware): fills plan.ops, plan.choices and
/// plan.estimated_cycles. With `layouts` (the graph's execution plan), an input its consumer wants in another layout
/// than its producer wrote is priced with its re-layout.
/// `kernels`: where the kernels' estimates are kept (null: a memo of the choice's own). `threads`: host threads that
/// may price the ops' placements at once (the plan is the same on any number).
void choose_placements(const Graph& graph, const Arch& arch, SplitPlan& plan, const ExecutionPlan* layouts = nullptr,
                       std::shared_ptr<KernelEstimates> kernels = nullptr, unsigned threads = 1);

/// Prices a plan made by the rule (`--split on`): fills plan.choices (each op's placement, estimate and terms, no
/// runner-up) and plan.estimated_cycles as choose_placements() would price that plan.
void price_placements(const Graph& graph, const Arch& arch, SplitPlan& plan, const ExecutionPlan* layouts = nullptr,
                      std::shared_ptr<KernelEstimates> kernels = nullptr);

/// A plan's estimate as the choice prices it: every op's own estimate under its placement (`plan.ops`, nullopt:
/// whole) plus the exchanges its inputs need from where their producers' placements left them.
double estimate_plan(const Graph& graph, const Arch& arch, const SplitPlan& plan,
                     const ExecutionPlan* layouts = nullptr);

/// One line per op of a cost-aware plan (`ldmsim plan`, `ldmsim run --dump-graph`): its placement, estimated
/// cycles and the runner-up it beat; empty when the plan was not chosen by cost.
std::string describe_placements(const Graph& graph, const SplitPlan& plan);

}  // namespace ldmsim
