// The split rule (issue 16, docs/splitting.md): how each op's work and tensors are cut into pieces across the
// machine's M memories (one per core group) and C cores, where each piece lives, and how partial results are
// combined. plan_split decides; tensor_tags shows it; execute runs each group's pieces on that group.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ldmsim/graph/graph.hpp"
#include "ldmsim/graph/run_record.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

struct ExecutionPlan;

/// How piece sizes round when D does not divide evenly.
enum class SplitRounding : std::uint8_t {
  kExact,  ///< pieces differ by at most one index (the first D mod pieces are one longer); nothing is added
  kPad,    ///< pieces of ceil(D / pieces), rounded up to whole DMA transactions along a contiguous dimension; D is
           ///< padded to pieces x that size (the tail pieces hold the padding)
  kAlign,  ///< along a contiguous dimension, exact in whole DMA transactions (boundaries on transaction multiples,
           ///< pieces that would be shorter than one merged away, nothing added); elsewhere as kExact
};
std::string_view to_string(SplitRounding rounding) noexcept;
std::optional<SplitRounding> parse_split_rounding(std::string_view text) noexcept;

struct SplitOptions {
  bool enabled = false;
  SplitRounding rounding = SplitRounding::kAlign;
  /// Each split op whose kernel can take them gets one pack of its constants per core (docs/splitting.md).
  bool pack_constants = true;
  /// With `enabled`: choose each op's placement (whole, or split along one of its dimensions) by estimated cycles
  /// over the whole graph (`--split auto`, docs/splitting.md "The cost-aware choice") instead of the fixed rule.
  bool cost_aware = false;
  /// With `cost_aware`: placements the user fixed (`--place NAME=PLACEMENT`), by op (OpNode::layer, as `ldmsim
  /// plan` lists them, or OpNode::label where names repeat) to a placement label of that op ("whole", "conv-h",
  /// "whole on cg1", ...). The choice prices the other ops around them; an op or label the graph does not have, or a
  /// name several ops share, is refused (ConfigError naming it).
  std::map<std::string, std::string> pinned;
};

/// `NAME=PLACEMENT` (the last '=' separates them: labels hold none) as a pin of SplitOptions::pinned; nullopt when
/// either side is empty or there is no '='.
std::optional<std::pair<std::string, std::string>> parse_pin(std::string_view text);

/// One dimension an op can be split along (an entry of its priority list).
struct SplitAxis {
  /// "conv-n", "conv-h", "conv-w", "conv-k", "conv-c", "conv-g", "rows", "inner", "cols", "elementwise", "pool-n", ...
  std::string rule;
  std::size_t operand;   ///< the op's tensor whose dimension it is (inputs first, then outputs)
  std::size_t axis;      ///< that tensor's axis
  std::uint64_t extent;  ///< D
  bool contiguous;       ///< the innermost dimension of its tensor (kPad rounds pieces to DMA transactions there)
  bool reduces;          ///< pieces give partial outputs that must be summed (a split of the inner dimension)
  /// The axis of each data input that this split cuts alike (an input split along it by its producer needs no
  /// exchange); -1: none (the split cuts a weight, or the inputs' axes differ from the output's).
  int input_axis = -1;
  /// Offered to the cost-aware choice only (`--split auto`), not taken by the fixed rule (`--split on`).
  bool cost_aware_only = false;
};

/// Which part of one of the op's tensors a piece needs: the whole tensor, or [begin, end) along `axis`.
struct TensorRegion {
  bool whole = true;
  std::size_t axis = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

/// The same part of a tensor (every whole region is the same, whatever its unused fields hold).
inline bool same_region(const TensorRegion& a, const TensorRegion& b) {
  return a.whole == b.whole && (a.whole || (a.axis == b.axis && a.begin == b.begin && a.end == b.end));
}

/// What one piece of an op (or one group's block of pieces) runs: each tensor's region, the sub-op's attributes,
/// and which optional inputs it leaves out (an addend added once, by the first piece of a reduction).
struct PieceWork {
  std::vector<TensorRegion> regions;  ///< per op tensor (inputs, then outputs)
  std::vector<bool> dropped;          ///< per input: left out of this piece
  nlohmann::json attrs;               ///< the sub-op's attributes (conv: the halo's padding)
};

/// One piece: an inclusive range [first, last] along the split dimension (after rounding), and its home.
struct SplitPiece {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  int group = 0;  ///< the core group whose memory holds it and whose cores run it
  int core = -1;  ///< mode 1: the core of that group; -1 otherwise
};

/// One pairwise addition of the reduction tree: piece results `left` and `right` summed into `left`.
struct ReductionPair {
  std::size_t left = 0;
  std::size_t right = 0;
  std::string exchange;  ///< "core" (two cores of one group) or "cg" (two groups)
};

/// How one op is split.
struct OpSplit {
  std::size_t op = 0;
  SplitAxis axis;
  std::uint64_t padded = 0;  ///< D after rounding (== extent under kExact)
  int mode = 0;              ///< 1: C pieces; 2: M pieces; 3: D pieces of one
  std::string parallelism;   ///< "data" (a neuron split), "model" (a weight split) or "hybrid" (both)
  std::vector<SplitPiece> pieces;
  std::vector<std::vector<ReductionPair>> tree;  ///< levels, leaves first; empty unless axis.reduces
  /// Per core group: the logical range [begin, end) of the split dimension its pieces cover (empty: none).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks;
  /// Per op tensor (inputs, then outputs): the pieces' regions of that tensor, for its tags.
  std::vector<std::vector<TensorRegion>> tensor_pieces;
  /// The pieces write their rows into one whole output in core group 0's memory (a conv cut by rows whose readers
  /// want it whole: docs/splitting.md, "Rows written into one tensor"); the cost-aware choice only.
  bool whole_output = false;
};

struct SplitPlan {
  SplitOptions options;
  std::uint32_t memories = 1;               ///< M
  std::uint32_t cores = 1;                  ///< C
  std::vector<std::optional<OpSplit>> ops;  ///< per op of the graph; nullopt: runs whole on every group
  /// Per op: the placement chosen (options.cost_aware) or the rule's, priced (no runner-up); empty when nothing is
  /// placed (one memory, or split off).
  std::vector<PlacementChoice> choices;
  double estimated_cycles = 0;  ///< the plan's estimated total (chosen or the rule's)
  nlohmann::json to_json() const;
};

/// "off", "on" (the rule) or "auto" (the cost-aware choice).
std::string_view split_mode(const SplitOptions& options) noexcept;
/// The op's splittable dimensions in priority order (docs/splitting.md); empty when it has none.
std::vector<SplitAxis> split_axes(const Graph& graph, const OpNode& op);
/// The work of the piece [begin, end) of `axis` (logical indices). `attrs`: the op's attributes, which the piece's
/// are made from.
PieceWork piece_work(const Graph& graph, const OpNode& op, const SplitAxis& axis, std::uint64_t begin,
                     std::uint64_t end, nlohmann::json attrs);
/// piece_work's regions and dropped inputs only, into `into` (its vectors reused; its attrs null): the planner asks
/// this for every piece of every candidate, where the attributes and fresh vectors cost most of its time.
void piece_regions(const Graph& graph, const OpNode& op, const SplitAxis& axis, std::uint64_t begin, std::uint64_t end,
                   PieceWork& into);
/// The shape of region `r` of a tensor of shape `whole`.
Shape region_shape(const Shape& whole, const TensorRegion& r);
/// True when a conv's piece of tensor `t` on a group (`held`, rows of a 4-D tensor with rows of an even width) lies
/// inside the region its only consumer's piece on that group reads (`need`: those rows and a halo), the consumer a
/// conv too: the producer then writes into the middle of the consumer's buffer and only the halo rows move
/// (docs/splitting.md, "Margin rows").
bool margin_rows(const Graph& graph, std::size_t t, const TensorRegion& held, const TensorRegion& need);
/// True when a piece of `consumer` (a pointwise conv cut by rows) may read `need`, rows of its data input `k` (X or
/// the residual: 4-D, of an even width), in place from a whole copy of that input in any group's memory, as a box
/// at the copy's plane pitch, instead of gathering them first (docs/splitting.md, "Rows read in place").
bool rows_in_place(const Graph& graph, const OpNode& consumer, std::size_t k, const TensorRegion& need);
/// True when a piece of `consumer` cut by channels under a pointwise split rule (`rule`: elementwise or fused-rows)
/// may read `need`, channels of its input `k` (a full-size operand of one sample, planes of an even size), in place
/// from a whole copy of it in any group's memory: a block of whole planes, read once (docs/splitting.md, "Channels
/// read in place").
bool channels_in_place(const Graph& graph, const OpNode& consumer, std::string_view rule, std::size_t k,
                       const TensorRegion& need);
/// `s` (a conv on the matrix engine cut by its output's rows, 4-D of an even width) as pieces that write their rows
/// into one whole output in core group 0's memory, boxes of it at its plane pitch; nullopt when `s` is not such a
/// cut.
std::optional<OpSplit> rows_into_one(const Graph& graph, const OpNode& op, const OpSplit& s);
/// The sub-op a piece runs: `op`'s kind bound to the piece's inputs (`work.regions`, the dropped left out) and
/// attributes (`work.attrs`; a reduction's pieces without the activation, which applies to their sum). Throws the
/// kind's ConfigError when it refuses them.
std::unique_ptr<BoundOp> bind_piece(const Graph& graph, const OpNode& op, const SplitAxis& axis, const PieceWork& work);
/// Whether split_along fills each piece's regions of every tensor (OpSplit::tensor_pieces) and the parallelism.
enum class PieceRegions { kFilled, kLater };
/// `op` cut along `axis` as the rule cuts it (mode, pieces, blocks, reduction tree); nullopt when a piece would need
/// an empty part of a tensor (a conv's rows that read only padding). With PieceRegions::kLater the pieces' regions
/// are left for fill_piece_regions: the cost-aware choice prices every candidate by its groups' blocks and needs
/// them only for the one it keeps (an op cut for every core has hundreds of pieces).
std::optional<OpSplit> split_along(const Graph& graph, const OpNode& op, const SplitAxis& axis, const SplitPlan& plan,
                                   const Arch& arch, PieceRegions regions = PieceRegions::kFilled);
/// Fills `s.tensor_pieces` and `s.parallelism` of a split made with PieceRegions::kLater (an output held whole,
/// `s.whole_output`, keeps no pieces); leaves a one-group split (one_group) as it is.
void fill_piece_regions(const Graph& graph, const OpNode& op, OpSplit& s);
/// The rule of an op run whole on one core group, its tensors in that group's memory (a placement of `--split auto`).
inline constexpr const char* kOneGroupRule = "one-group";
/// The rule of a fused kernel cut along one of its frame's row axes (each piece runs the program on its rows).
inline constexpr const char* kFusedRowsRule = "fused-rows";
/// The rule of an attention kernel cut by its batches (a transformer's heads): each piece reads its heads' Q, Kt and
/// V and writes their Y (offered to the cost-aware choice only).
inline constexpr const char* kHeadsRule = "heads";
/// `op` run whole on core group `group` alone: one piece, the whole op, its inputs and outputs in that group's memory.
OpSplit one_group(const OpNode& op, const SplitPlan& plan, int group);
/// Applies the split rule to every op of `graph` on `arch` (or, with options.cost_aware, the cost-aware choice:
/// placement_choice.hpp, which prices re-layouts by the `layouts` of the graph's execution plan when given, and keeps
/// the kernels' estimates in `kernels` when given: a later plan on the same arch finds them; it prices on up to
/// `threads` host threads at once).
SplitPlan plan_split(const Graph& graph, const Arch& arch, const SplitOptions& options,
                     const ExecutionPlan* layouts = nullptr, std::shared_ptr<KernelEstimates> kernels = nullptr,
                     unsigned threads = 1);

}  // namespace ldmsim
