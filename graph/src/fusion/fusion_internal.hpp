// Private to the fusion pass: how an op's tensors align with a group's frame, the search for a group's frame, the
// grouping of ops, and the lowering of a group to a fused program.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ldmsim/graph/fusion.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"

namespace ldmsim::fusion {

/// The op's fusion form, or kind kNone when the op cannot join a group (one output only).
FusionForm form_of(const OpNode& op);

/// Whether the op's form is a backbone (a reduction or normalisation whose frame the group takes).
bool is_backbone(const FusionForm& f);
/// A backbone's own frame: its input's shape, K = the reduced block (trailing from the axis for the normalisations).
FusionFrame backbone_frame(const Graph& graph, const OpNode& op, const FusionForm& f);
/// The dims of input `k` (or, with k == inputs.size(), the output) of `op` aligned to a frame of rank `rank`:
/// right-aligned (numpy), except batch normalisation's [C] vectors, which align with axis 1 of its NCHW input.
/// Reductions without keepdims give their keepdims dims (the same elements in the same order). nullopt when the
/// tensor's rank exceeds the frame's.
std::optional<std::vector<std::uint64_t>> aligned_dims(const Graph& graph, const OpNode& op, std::size_t k,
                                                       std::size_t rank);
/// The same dims before alignment (as many as the tensor has; a batch normalisation's [C] as [1, C, 1, 1]).
std::vector<std::uint64_t> operand_dims(const Graph& graph, const OpNode& op, std::size_t k);
/// Whether a tensor of `operand_dims` propagates the frame's index: each axis 1 or the frame's (once aligned), K and
/// I blocks all or nothing, and (an `output`) full on the rows.
bool operand_propagates(const std::vector<std::uint64_t>& operand, bool output, const FusionFrame& frame);

/// The frame of a set of ops (sorted op indices) when they can form one group: every backbone shares one frame and
/// every tensor of every op propagates its index (each axis 1 or the frame's; K and I blocks all or nothing; op
/// outputs full on the rows). `backbones` receives the backbone ops in order.
std::optional<FusionFrame> group_frame(const Graph& graph, const std::vector<std::size_t>& ops,
                                       std::vector<std::size_t>* backbones = nullptr);

/// Every frame the ops could share, the preferred first (one for a group with backbones; for a point-wise group
/// each split of its shape into rows and an inner block that propagates).
std::vector<FusionFrame> frame_candidates(const Graph& graph, const std::vector<std::size_t>& ops,
                                          std::vector<std::size_t>* backbones = nullptr);

/// The candidate groups: sets of two or more fusable ops, each with a frame and no cycle through outside ops. Ops
/// marked in `excluded` (activations folded into their producer) join none.
std::vector<std::vector<std::size_t>> find_groups(const Graph& graph, const std::vector<char>& excluded);

/// A group's program and everything its fused op needs.
struct LoweredGroup {
  FusedProgram program;
  std::vector<std::size_t> inputs;   ///< external input tensors, as the fused op reads them
  std::vector<std::size_t> outputs;  ///< external output tensors
  std::shared_ptr<const BoundOp> bind(const Graph& graph, FusedMapping mapping, const std::string& arch,
                                      StagingPolicy policy) const;
  std::vector<std::size_t> ops;
};
LoweredGroup lower_group(const Graph& graph, const std::vector<std::size_t>& ops, const FusionFrame& frame);

/// A group's frame with its program and mapping (none when even a row cut across a core group does not fit ldm).
struct FrameChoice {
  FusionFrame frame;
  LoweredGroup low;
  std::optional<FusedMapping> mapping;
};
/// The first of frame_candidates whose program maps onto `arch`; for a point-wise group, a later candidate instead
/// when estimate_pointwise_cycles prices it well below the first (shorter rows spread a small tensor over more
/// cores). `backbones` receives the group's backbone ops.
FrameChoice choose_frame(const Graph& graph, const std::vector<std::size_t>& ops, std::vector<std::size_t>& backbones,
                         const Arch& arch, StagingPolicy policy, std::uint32_t cores);

/// Ops (in a topological order) run as one: the reference composes theirs (from the tensors `inputs` to `outputs`),
/// the tolerance and flops are their sums.
struct Composed {
  std::function<std::vector<HostTensor>(std::span<const HostTensor>)> reference;
  Tolerance tolerance{0.0, 0.0};
  std::uint64_t flops = 0;
};
Composed compose_members(const Graph& graph, const std::vector<std::size_t>& ops,
                         const std::vector<std::size_t>& inputs, const std::vector<std::size_t>& outputs);

/// A fused group that reads the scores of a batched product and whose one output alone feeds a second product
/// (attention: softmax(Q Kt ...) V), run with both products in one kernel (docs/fusion.md, "Attention").
struct AttentionMatch {
  std::size_t first = 0, second = 0;  ///< the products' op indices
  std::size_t score_input = 0;        ///< the program input the first product's result loads into
  AttentionShape shape;
  QueryScale scale = QueryScale::kNone;
  std::optional<std::size_t> scaling;  ///< the op that scales Q (its input is the op's Q, its scalar the last input)
  AttentionMapping mapping;
  std::vector<std::size_t> inputs;  ///< Q, Kt, V, then the group's inputs but the scores
  std::size_t output = 0;           ///< the second product's result
  std::vector<std::size_t> ops;     ///< the products and the group's ops, in order
};
/// The attention form of a lowered group, when its shapes and ldm allow one; `folded`: ops that fold into a store.
/// A div or mul of Q by a scalar joins it too, unless `policy` stages tensors unpadded (the scalar is read as a word).
std::optional<AttentionMatch> match_attention(const Graph& graph, const LoweredGroup& group,
                                              const std::vector<char>& folded, const Arch& arch, StagingPolicy policy);
std::shared_ptr<const BoundOp> bind_attention(const Graph& graph, const LoweredGroup& group,
                                              const AttentionMatch& match, const std::string& arch);

/// A graph with `graph`'s name, arch, staging, registry and inputs, and no op: what a contraction of it starts from.
Graph inputs_of(const Graph& graph);
/// The names of `tensors` of `graph`.
std::vector<std::string> tensor_names(const Graph& graph, const std::vector<std::size_t>& tensors);
/// The layer names of `ops` joined by "+" (shortened to the first and last past 160 characters): a contracted op's.
std::string joined_name(const Graph& graph, const std::vector<std::size_t>& ops);

/// `graph` with every chain of view steps holding two or more copies (each op reading the one output of the op before
/// it, that output read by nothing else and not a graph output) replaced by one op of type "view"; `folds` receives
/// each chain, `labels` each op's label in the result (empty for an op of a chain).
Graph fold_view_chains(const Graph& graph, std::vector<ViewChainFold>& folds, std::vector<std::string>& labels);

/// `graph` with each attention op reading its Q, Kt (or K) and V in place where a view op that only it reads takes
/// them from, and writing Y where a transpose (keeping the last axis) that alone reads Y would put it; those ops
/// dropped. `folds` and `labels` as fold_view_chains gives them.
Graph fold_views_into_attention(const Graph& graph, std::vector<AttentionViewFold>& folds,
                                std::vector<std::string>& labels);

/// `graph` with the later readers of each reshape's (or flatten's) input reading its output reshaped back, inserted
/// before the first of them, where that lets both reshapes hand their buffer over; an empty graph when there is no
/// such reshape. `labels`: each op's label in the result.
Graph reshape_back(const Graph& graph, std::vector<std::string>& labels);

/// The graph with each attention kernel's fused q/k/v projection reordered by head (head_major.cpp), recording each
/// in `folds`; an empty graph (no ops) when none matches.
Graph head_major_projections(const Graph& graph, std::vector<HeadMajorFold>& folds);

}  // namespace ldmsim::fusion
