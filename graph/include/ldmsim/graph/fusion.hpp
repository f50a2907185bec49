// The fusion pass (docs/fusion.md): a graph-to-graph transform run before planning.
//
// First, an add of a residual that alone reads a conv's output, and a relu or clip that alone reads a conv's,
// gemm's, matmul's or fc's output (or that add's), fold into that op's store.
//
// Then compute-intensive ops (conv, gemm, matmul, ...) and layout ops cut the graph; connected memory-intensive ops
// between them are merged into groups around their backbones (the reductions, and the reductions inside softmax and
// layer normalisation) as long as every value of the group propagates the backbone's index and no cycle through an
// outside op appears. Each group of two or more ops becomes one "fused" op whose kernel runs the group on ldm tiles;
// a group whose smallest mapping does not fit ldm stays unfused.
//
// Last, chains of ops that only rearrange elements (a transformer's slice, reshape and transpose of q, k and v)
// become one strided copy each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/graph/graph.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

struct FusionOptions {
  /// Cores the mappings may use (0: every core of the arch): the method's examples map onto a few idle cores.
  std::uint32_t cores = 0;
  /// A group between two batched products (softmax(Q Kt) V) runs with both products in one kernel.
  bool attention = true;
  /// A chain of ops that only rearrange elements (slice, expand, reshape, transpose keeping the last axis last),
  /// with two or more copies among them, becomes one strided copy ("view"); an attention kernel then reads its
  /// operands where such views (and the heads' merge after it) place them.
  bool view_chains = true;
  /// The later readers of a reshape's input read its output reshaped back, so both reshapes hand their buffer over
  /// (not under naive staging, whose layouts of the two differ).
  bool reshape_back = true;
  /// On an arch of several core groups, an attention kernel reading q, k and v in place from one projection has the
  /// projection's weight and bias columns ordered by head, so that a split of the projection by columns leaves each
  /// group its heads' q, k and v (docs/fusion.md, "Heads side by side").
  bool head_major = true;
};

/// A chain of view steps that became one op of type "view" (one strided copy of the chain's input).
struct ViewChainFold {
  std::vector<std::string> ops;  ///< the chain's op labels, in the graph the chain was found in
  std::string kernel;            ///< the view op's label in the fused graph (or the attention op's that reads in place)
};

/// View ops an attention kernel absorbed: it reads Q, Kt (or K) and V where they view their inputs, and writes Y
/// where the transpose after it would have put Y.
struct AttentionViewFold {
  std::string kernel;              ///< the attention op's label in the fused graph
  std::vector<std::string> ops;    ///< the absorbed ops' labels, in the graph they were found in
  std::vector<std::string> roles;  ///< per absorbed op: "Q", "Kt", "K" (read as rows, transposed), "V" or "Y"
};

/// An attention kernel whose projection's columns were reordered by head (docs/fusion.md, "Heads side by side").
struct HeadMajorFold {
  std::string kernel;      ///< the attention op's label in the fused graph
  std::string projection;  ///< the matmul whose weight and bias columns were reordered
  std::uint64_t heads = 0;
};

/// One candidate group and what became of it.
struct FusionGroup {
  std::vector<std::size_t> ops;        ///< op indices in the original graph, in order
  std::vector<std::size_t> backbones;  ///< the primary backbone first, then the secondary ones
  FusionFrame frame;
  std::optional<FusedMapping> mapping;  ///< set when the group was fused
  std::string kernel;                   ///< the fused op's label in the fused graph; empty when not fused
  std::string not_fused;                ///< why not (a single op, ldm), when not fused
  std::vector<std::string> values;      ///< "name [o, k, i]": each value's index propagation
  /// "with A (scores) and B (output): ..." when the group runs with the products around it in one kernel (attention).
  std::string attention;
};

/// Ops folded into the store of the op before them: an add of a residual (a conv's attribute "residual") and a relu
/// or clip (attribute "activation" of a conv, gemm, matmul or fc). The op stores what they would have; they no
/// longer run.
struct StoreFold {
  std::size_t op = 0;                     ///< op indices in the original graph
  std::optional<std::size_t> add;         ///< the add whose other input became the residual
  bool residual_first = false;            ///< the residual (or bias) was the add's first input
  bool bias = false;                      ///< the add's other input is a vector over the last axis (matmul's "bias")
  std::optional<std::size_t> activation;  ///< the relu or clip
  std::string kernel;                     ///< the folded op's label in the fused graph
};

struct FusedGraph {
  Graph graph;                                     ///< the graph with every fused group replaced by one op
  std::vector<FusionGroup> groups;                 ///< candidate groups in order of their first op
  std::vector<StoreFold> folds;                    ///< in the original graph's order
  std::vector<ViewChainFold> view_chains;          ///< in graph order
  std::vector<AttentionViewFold> attention_views;  ///< in graph order
  std::vector<HeadMajorFold> head_major;           ///< in graph order
  std::size_t bias_folds() const;
  std::size_t activation_folds() const;
  std::size_t residual_folds() const;
  /// For --dump-graph: each group, its backbones, frame, value patterns, mapping and kernel.
  std::string describe(const Graph& original) const;
};

/// Fuses `graph` for `arch` under `policy` (mappings depend on both).
FusedGraph fuse(const Graph& graph, const Arch& arch, StagingPolicy policy, const FusionOptions& options = {});

}  // namespace ldmsim
