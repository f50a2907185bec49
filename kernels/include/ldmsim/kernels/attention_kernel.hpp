// Attention in one kernel (docs/fusion.md, "Attention"): the fused program of a softmax group whose rows are the
// score rows of a batched product, together with that product and the one that reads its result. For each batch b:
// scores = Q[b] Kt[b] (Q [S, D], Kt [D, T]), the program maps the score rows (with its other inputs: a scale, a mask)
// to probabilities P[b] [S, T], and Y[b] = P[b] V[b] (V [T, E]). Scores and probabilities never leave ldm. Each core
// group takes whole batches (or parts of one's rows, when batches are fewer than groups); its first core reads the
// batch's Kt and V once for all of its cores (BCAST), and every core multiplies its query rows.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/kernels/fused_kernel.hpp"
#include "ldmsim/kernels/view_chain.hpp"

namespace ldmsim {

/// The products' sizes: `batches` batches of Q [s, d], Kt [d, t], V [t, e].
struct AttentionShape {
  std::uint64_t batches = 1, s = 1, d = 1, t = 1, e = 1;
};

/// What is done to Q's elements before the first product, as the op that made Q did (a transformer's 1 / sqrt(d),
/// exported as a div or mul by a scalar): the result is rounded to fp16 as that op stores it. The scalar is the
/// attention op's last input.
enum class QueryScale : std::uint8_t { kNone, kMultiply, kDivide };

struct AttentionMapping {
  FusedMapping program;     ///< the program's tiles (tile_rows query rows at once) and resident inputs
  std::uint64_t parts = 1;  ///< each batch's query rows are cut into this many parts, so that every group has work
  /// Kt and V in two ldm buffers: the group's next batch is read while this one is used.
  bool prefetch = false;
  /// The item's query rows are read once for every core of the group (BCAST, with Kt and V) instead of by each
  /// core: one read of the whole block instead of a small request per core.
  bool q_broadcast = false;
  /// Per program input: the same for every query row of a batch (a key mask), so read once per batch with Kt and V.
  std::vector<bool> per_batch;
  /// "query rows 2 per tile, each batch in 1 part, ..." for --dump-graph.
  std::string str() const;
};

/// The mapping of `program` (one output: the probabilities; `score_input` the input its scores load into) between
/// the products of `shape` on `arch`; nullopt when D, T or E is odd (the kernel reads and writes whole rows as
/// 4-byte words) or when one batch's Kt and V with a query row's values do not fit a core's ldm.
std::optional<AttentionMapping> choose_attention_mapping(const FusedProgram& program, std::size_t score_input,
                                                         const AttentionShape& shape, const Arch& arch);

/// The bound op: inputs Q [batch..., S, D], Kt [batch..., D, T], V [batch..., T, E], then the program's inputs but
/// the scores, in order, then (`scale` not kNone) the scalar Q is scaled by; output Y [batch..., S, E]. `reference` and
/// `tolerance` compose the members' (the mapping is for the arch named `arch`: run() refuses another).
std::shared_ptr<const BoundOp> make_attention_op(
    FusedProgram program, std::size_t score_input, AttentionShape shape, QueryScale scale, AttentionMapping mapping,
    std::vector<Shape> inputs, Shape output,
    std::function<std::vector<HostTensor>(std::span<const HostTensor>)> reference, Tolerance tolerance,
    std::uint64_t flops, std::string arch);

/// The attention op's products' operands read from (and Y written into) other tensors in place: Q's [s, d] rows,
/// Kt's [d, t] rows (or, `k_rows`, K's [t, d] rows, multiplied transposed), V's [t, e] rows and Y's [s, e] rows of
/// each batch, placed in their tensors as MatrixPlacement says. A transformer's q/k/v split and its heads' merge
/// then copy nothing.
struct AttentionViews {
  MatrixPlacement q, kt, v, y;
  bool k_rows = false;
};

/// `op`, an attention op, reading Q, Kt (or K) and V from tensors of `sources` and writing Y into a tensor of
/// `y_shape` through `views` (in place of any views it had); the program's other inputs as before. nullptr when
/// `op` is not an attention op, a placement leaves its tensor or a row does not start on a whole word, or Y's rows
/// do not fill `y_shape` exactly once.
std::shared_ptr<const BoundOp> attention_with_views(const BoundOp& op, const std::array<Shape, 3>& sources,
                                                    const Shape& y_shape, const AttentionViews& views);

/// An attention op's products' sizes and, when it reads and writes other tensors in place, its views; nullopt for
/// another op.
struct AttentionLayout {
  AttentionShape shape;
  std::optional<AttentionViews> views;
};
std::optional<AttentionLayout> attention_layout(const BoundOp& op);

/// The region of one of an attention op's tensors that a range of its batches reads or writes: the whole tensor, or
/// [begin, end) along `axis`.
struct AttentionRegion {
  bool whole = true;
  std::size_t axis = 0;
  std::uint64_t begin = 0, end = 0;
};

/// The batches (a transformer's heads) of `op`, an attention op; nullopt for another op.
std::optional<std::uint64_t> attention_batches(const BoundOp& op);

/// What batches [begin, end) of attention op `op` read and write (a split across core groups by batches), per op
/// tensor (inputs, then Y): nullopt when Q's, Kt's, V's or Y's matrices of those batches are not a range of one axis
/// of their tensor, or the program's frame has more than one batch axis.
std::optional<std::vector<AttentionRegion>> attention_batch_regions(const BoundOp& op, std::uint64_t begin,
                                                                    std::uint64_t end);

/// Batches [begin, end) of attention op `op` as an attention op of their own, mapped for `arch` (a core group's):
/// it reads the input regions attention_batch_regions gives as tensors of their own and writes its batches' Y into
/// a tensor of the whole op's output shape (where the pieces of the other batches write theirs); its reference is
/// the whole op's on those batches. nullptr when there are no such regions or no mapping fits.
std::shared_ptr<const BoundOp> attention_batch_piece(const BoundOp& op, std::uint64_t begin, std::uint64_t end,
                                                     const Arch& arch);

}  // namespace ldmsim
