// Private to the fusion pass: how an op's tensors align with a group's frame, the search for a group's frame, the
// grouping of ops, and the lowering of a group to a fused program.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ldmsim/graph/fusion.hpp"

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
  std::shared_ptr<const BoundOp> bind(const Graph& graph, FusedMapping mapping, const std::string& arch) const;
  std::vector<std::size_t> ops;
};
LoweredGroup lower_group(const Graph& graph, const std::vector<std::size_t>& ops, const FusionFrame& frame);

}  // namespace ldmsim::fusion
