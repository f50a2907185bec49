// Per-operator split rules (see split.hpp, docs/splitting.md): the dimensions an op can be split along, in
// priority order, and what a piece of each needs from the op's tensors.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "ldmsim/graph/split.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"
#include "ldmsim/kernels/fused_kernel.hpp"

namespace ldmsim {

namespace {

/// The split family of the op's kind in the graph's registry (a fused op's kind is none of its registry's: none).
/// An op with an int32 or bool tensor (integer arithmetic on ids, a concat of masks) runs whole: the pieces and
/// their exchanges count fp16 elements.
SplitRule rule_of(const Graph& g, const OpNode& op) {
  const OperatorKind* kind = g.registry().find(op.type);
  if (kind == nullptr) return SplitRule::kNone;
  for (std::size_t k = 0; k < op.inputs.size() + op.outputs.size(); ++k) {
    if (op.bound->dtype(k) != DType::kF16) return SplitRule::kNone;
  }
  return kind->traits().split;
}

const Shape& shape_of(const Graph& g, const OpNode& op, std::size_t operand) {
  const std::size_t n = op.inputs.size();
  return g.tensor(operand < n ? op.inputs[operand] : op.outputs[operand - n]).shape;
}

std::size_t operands(const OpNode& op) {
  return op.inputs.size() + op.outputs.size();
}

SplitAxis axis_of(const Graph& g, const OpNode& op, std::string rule, std::size_t operand, std::size_t axis,
                  int input_axis, bool reduces = false) {
  const Shape& s = shape_of(g, op, operand);
  return {std::move(rule), operand, axis, s[axis], axis + 1 == s.rank(), reduces, input_axis};
}

/// Axis `axis` of the output, cut alike in every input of the output's rank (element-wise, pools, concat).
SplitAxis same_axis(const Graph& g, const OpNode& op, std::string rule, std::size_t axis) {
  const std::size_t y = op.inputs.size();
  const bool same_rank = shape_of(g, op, 0).rank() == shape_of(g, op, y).rank();
  return axis_of(g, op, std::move(rule), y, axis, same_rank ? static_cast<int>(axis) : -1);
}

std::vector<SplitAxis> conv_axes(const Graph& g, const OpNode& op) {
  const std::size_t y = op.inputs.size();
  std::vector<SplitAxis> out{axis_of(g, op, "conv-n", 0, 0, 0), axis_of(g, op, "conv-h", y, 2, 2),
                             axis_of(g, op, "conv-w", y, 3, 3)};
  const std::uint64_t groups = op.bound->split_geometry().groups;
  if (groups == 1) {
    out.push_back(axis_of(g, op, "conv-k", 1, 0, -1));
    // The input channels: each piece sums over its own, the reduction tree adds the partial outputs. Its input
    // needs no exchange after a producer cut by channels (a depthwise conv before a 1x1 projection).
    // Offered to the cost-aware choice only: the fixed rule would take it for a conv whose other dimensions are
    // small, summing in another order than the whole op.
    out.push_back(axis_of(g, op, "conv-c", 0, 1, 1, /*reduces=*/true));
    out.back().cost_aware_only = true;
  }
  // A depthwise conv (one input and one output channel per group): its channels, each piece a depthwise conv of
  // its own channels, reading only their planes. Last: the fixed rule (`--split on`) takes it to keep a cut of its
  // input's channels, or when no dimension before it has D >= M.
  if (groups > 1 && shape_of(g, op, 0)[1] == groups && shape_of(g, op, y)[1] == groups) {
    out.push_back(axis_of(g, op, "conv-g", y, 1, 1));
  }
  return out;
}

/// True when a conv has a residual input (its last; set when the fusion pass folds an add).
bool conv_residual(const OpNode& op) {
  return op.bound->split_geometry().residual;
}

/// True when a conv has a bias (its third input; a folded residual comes after it).
bool conv_bias(const OpNode& op) {
  return op.inputs.size() - (conv_residual(op) ? 1 : 0) == 3;
}

/// fc's W and gemm's B with transB hold one output column per row ([N, K]); otherwise B is [K, N].
bool b_rows_are_outputs(const OpNode& op) {
  return op.bound->split_geometry().trans_b;
}

/// fc X [n, ...] W [N, K] b [N]; gemm A [M, K] B [K, N] (or [N, K] with transB) C; matmul A [M, K] B [K, N].
std::vector<SplitAxis> matrix_axes(const Graph& g, const OpNode& op) {
  const Shape& a = shape_of(g, op, 0);
  const SplitGeometry geometry = op.bound->split_geometry();
  if (geometry.trans_a) return {};
  if (geometry.batched) {
    // A [b.., M, K] times a 2-D B (a transformer's projection on [S, B, H] or [B, S, H]) is one product of
    // [b.. x M, K] by [K, N]: its columns split, each group reading a share of the weights, which are most of the
    // bytes. Its rows are not offered: each group would read the whole weights (a BERT-base layer's feed-forward
    // ran 1.3x slower so on sw26010), which the roofline estimate does not see.
    const Shape& b = shape_of(g, op, 1);
    if (b.rank() != 2 || a.rank() < 2 || shape_of(g, op, op.inputs.size()).rank() != a.rank()) return {};
    return {axis_of(g, op, "cols", 1, 1, -1)};
  }
  std::vector<SplitAxis> out{axis_of(g, op, "rows", 0, 0, 0)};
  // The inner dimension: fc's X must hold it on axis 1 alone (a matrix, or [n, c, 1, 1]).
  const bool inner = !geometry.flattens_a || a.rank() == 2 || a.product(2, a.rank()) == 1;
  if (inner) {
    SplitAxis k = axis_of(g, op, "inner", 0, 1, 1, true);
    k.contiguous = a.product(2, a.rank()) == 1;
    out.push_back(k);
  }
  out.push_back(axis_of(g, op, "cols", 1, b_rows_are_outputs(op) ? 0 : 1, -1));
  return out;
}

/// Every dimension of the output, the largest first (the first of equals): the rule takes the largest.
std::vector<SplitAxis> elementwise_axes(const Graph& g, const OpNode& op) {
  const std::size_t y = op.inputs.size();
  const Shape& s = shape_of(g, op, y);
  std::vector<std::size_t> order(s.rank());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return s[a] > s[b]; });
  std::vector<SplitAxis> out;
  for (const std::size_t d : order) out.push_back(same_axis(g, op, "elementwise", d));
  return out;
}

/// Pools: n, c, then the output rows and columns (read with a halo) when a window pool pads nothing.
std::vector<SplitAxis> pool_axes(const Graph& g, const OpNode& op) {
  std::vector<SplitAxis> out{same_axis(g, op, "pool-n", 0), same_axis(g, op, "pool-c", 1)};
  if (const SplitGeometry geometry = op.bound->split_geometry(); geometry.window && geometry.pads_nothing()) {
    out.push_back(same_axis(g, op, "pool-h", 2));
    out.push_back(same_axis(g, op, "pool-w", 3));
  }
  return out;
}

/// concat: any axis but its own, every input cut alike.
std::vector<SplitAxis> concat_axes(const Graph& g, const OpNode& op) {
  const auto rank = static_cast<std::int64_t>(shape_of(g, op, 0).rank());
  if (rank == 0) return {};
  const auto own = static_cast<std::int64_t>(op.bound->split_geometry().axis);
  std::vector<SplitAxis> out;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (d != own) out.push_back(same_axis(g, op, "concat", static_cast<std::size_t>(d)));
  }
  return out;
}

TensorRegion range(std::size_t axis, std::uint64_t begin, std::uint64_t end) {
  return {false, axis, begin, end};
}

std::vector<Shape> operand_shapes(const Graph& g, const OpNode& op) {
  std::vector<Shape> out;
  for (std::size_t k = 0; k < operands(op); ++k) out.push_back(shape_of(g, op, k));
  return out;
}

/// A fused kernel: its frame's row axes, outermost first, where every external tensor holds the axis or
/// broadcasts along it (each piece runs the same program on its rows; the reductions are within a row).
std::vector<SplitAxis> fused_axes(const Graph& g, const OpNode& op, const FusedProgram& program) {
  const std::vector<Shape> shapes = operand_shapes(g, op);
  const std::size_t y = op.inputs.size(), rank = program.frame.shape.rank();
  const Shape& out = shape_of(g, op, y);
  std::vector<SplitAxis> axes;
  for (std::size_t a = 0; a < program.frame.k_begin; ++a) {
    if (!fused_rows_cut(program, shapes, a)) continue;
    const std::size_t at = a + out.rank() - rank;  // the output is full on every row axis
    const auto in = fused_tensor_axis(program, shape_of(g, op, 0), program.inputs[0], a);
    const bool alike = in && shape_of(g, op, 0).rank() == out.rank();
    axes.push_back(axis_of(g, op, kFusedRowsRule, y, at, alike ? static_cast<int>(*in) : -1));
  }
  return axes;
}

/// Fused rows [begin, end) of the output's axis: each tensor's rows where it holds the axis, else the whole.
void fused_work(const Graph& g, const OpNode& op, const FusedProgram& program, const SplitAxis& axis,
                std::uint64_t begin, std::uint64_t end, PieceWork& w) {
  const std::size_t frame_axis = axis.axis + program.frame.shape.rank() - shape_of(g, op, axis.operand).rank();
  for (std::size_t k = 0; k < operands(op); ++k) {
    const std::size_t v = k < op.inputs.size() ? program.inputs[k] : program.outputs[k - op.inputs.size()];
    if (const auto at = fused_tensor_axis(program, shape_of(g, op, k), v, frame_axis)) {
      w.regions[k] = range(*at, begin, end);
    }
  }
}

/// Elementwise: inputs whose aligned dimension equals the output's follow the output's range; broadcast ones whole.
void elementwise_work(const Graph& g, const OpNode& op, const SplitAxis& axis, std::uint64_t begin, std::uint64_t end,
                      PieceWork& w) {
  const Shape& out = shape_of(g, op, axis.operand);
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const Shape& in = shape_of(g, op, k);
    const auto shift = static_cast<std::ptrdiff_t>(out.rank()) - static_cast<std::ptrdiff_t>(in.rank());
    const std::ptrdiff_t aligned = static_cast<std::ptrdiff_t>(axis.axis) - shift;
    if (aligned >= 0 && in[static_cast<std::size_t>(aligned)] == out[axis.axis]) {
      w.regions[k] = range(static_cast<std::size_t>(aligned), begin, end);
    }
  }
  w.regions[axis.operand] = range(axis.axis, begin, end);
}

/// conv or pool output rows (or columns) [begin, end): the input rows they read (the halo), and (with `attrs`) a
/// conv's padding.
void spatial_work(const Graph& g, const OpNode& op, const SplitAxis& axis, std::uint64_t begin, std::uint64_t end,
                  bool attrs, PieceWork& w) {
  const Shape& x = shape_of(g, op, 0);
  const bool conv = rule_of(g, op) == SplitRule::kConv;
  const SplitGeometry s = op.bound->split_geometry();
  const std::size_t at = axis.axis == 2 ? 0 : 1, at_other = 1 - at;  // h or w
  const std::uint64_t stride = s.stride[at], pad_before = s.pad_before[at];
  const std::uint64_t span = (s.kernel[at] - 1) * s.dilation[at] + 1;
  // Padded coordinates: input row i sits at i + pad_before.
  const std::uint64_t first = begin * stride, last = (end - 1) * stride + span;  // [first, last) padded
  // A piece whose rows read only padding has no input rows: in_end <= in_begin (plan_split then does not split so).
  const std::uint64_t in_begin = std::min<std::uint64_t>(x[axis.axis], first > pad_before ? first - pad_before : 0);
  const std::uint64_t in_end = std::min<std::uint64_t>(x[axis.axis], last > pad_before ? last - pad_before : 0);
  const std::uint64_t before = first < pad_before ? pad_before - first : 0;
  const std::uint64_t after = last > pad_before + x[axis.axis] ? last - pad_before - x[axis.axis] : 0;
  w.regions[0] = range(axis.axis, in_begin, in_end);
  w.regions[axis.operand] = range(axis.axis, begin, end);
  if (!conv) {  // pools split so only when they pad nothing
    // With ceil_mode the last window runs past the input: a sub-pool needs at least one window's rows (an empty
    // region marks a piece that cannot run, and plan_split takes another dimension).
    if (in_end - in_begin < span) w.regions[0] = range(axis.axis, in_begin, in_begin);
    return;
  }
  if (!attrs) return;
  std::uint64_t pads[4];
  pads[at] = before, pads[at + 2] = after;
  pads[at_other] = s.pad_before[at_other], pads[at_other + 2] = s.pad_after[at_other];
  w.attrs["pad"] = {pads[0], pads[1], pads[2], pads[3]};
}

/// An attention kernel: its batches (heads), when a range of them reads and writes a range of one axis of each
/// tensor. The axis named is Y's.
std::vector<SplitAxis> attention_axes(const Graph& g, const OpNode& op, std::uint64_t batches) {
  if (batches < 2) return {};
  const auto one = attention_batch_regions(*op.bound, 0, 1);
  if (!one || (*one)[op.inputs.size()].whole) return {};
  SplitAxis axis = axis_of(g, op, kHeadsRule, op.inputs.size(), (*one)[op.inputs.size()].axis, -1);
  axis.extent = batches;  // the pieces are ranges of batches (each batch's Y is a range of that axis)
  axis.contiguous = false;
  axis.cost_aware_only = true;
  return {axis};
}

/// Batches [begin, end) of an attention kernel (past the last: padding of a rounded split, which reads nothing).
void attention_work(const OpNode& op, std::uint64_t begin, std::uint64_t end, PieceWork& w) {
  end = std::min(end, attention_batches(*op.bound).value_or(0));
  if (begin >= end) return;
  const auto regions = attention_batch_regions(*op.bound, begin, end);
  if (!regions) {
    throw std::logic_error(fmt::format("split of {}: batches [{}, {}) have no regions", op.label(), begin, end));
  }
  for (std::size_t k = 0; k < regions->size() && k < w.regions.size(); ++k) {
    const AttentionRegion& r = (*regions)[k];
    if (!r.whole) w.regions[k] = range(r.axis, r.begin, r.end);
  }
}

}  // namespace

std::vector<SplitAxis> split_axes(const Graph& graph, const OpNode& op) {
  if (const auto batches = attention_batches(*op.bound)) return attention_axes(graph, op, *batches);
  if (const FusedProgram* program = fused_program(*op.bound)) return fused_axes(graph, op, *program);
  switch (rule_of(graph, op)) {
    case SplitRule::kConv:
      return conv_axes(graph, op);
    case SplitRule::kMatrix:
      return matrix_axes(graph, op);
    case SplitRule::kElementwise:
      return elementwise_axes(graph, op);
    case SplitRule::kPool:
      return pool_axes(graph, op);
    case SplitRule::kConcat:
      return concat_axes(graph, op);
    case SplitRule::kSpatialBn:
      return {same_axis(graph, op, "bn-n", 0), same_axis(graph, op, "bn-h", 2), same_axis(graph, op, "bn-w", 3)};
    case SplitRule::kNone:
      break;
  }
  return {};
}

namespace {

/// The piece's regions and dropped inputs into `w` (its vectors reused), and with `attrs` its attributes made from
/// those already in w.attrs.
void fill_piece(const Graph& graph, const OpNode& op, const SplitAxis& axis, std::uint64_t begin, std::uint64_t end,
                bool attrs, PieceWork& w) {
  w.regions.assign(operands(op), TensorRegion{});
  w.dropped.assign(op.inputs.size(), false);
  const std::size_t y = op.inputs.size();
  // A view: each comparison below rejects a rule of another length without comparing characters (a std::string
  // compares them first; the placement search binds tens of thousands of pieces).
  const std::string_view r = axis.rule;
  if (r == "conv-n") {
    w.regions[0] = range(0, begin, end), w.regions[y] = range(0, begin, end);
  } else if (r == "conv-h" || r == "conv-w" || r == "pool-h" || r == "pool-w") {
    spatial_work(graph, op, axis, begin, end, attrs, w);
  } else if (r == "conv-k") {
    w.regions[1] = range(0, begin, end), w.regions[y] = range(1, begin, end);
    if (conv_bias(op)) w.regions[2] = range(0, begin, end);
  } else if (r == "conv-c") {  // X's channels and W's: a partial output; bias and residual added by the first piece
    w.regions[0] = range(1, begin, end), w.regions[1] = range(1, begin, end);
    if (conv_bias(op)) w.dropped[2] = begin != 0;
    if (conv_residual(op) && begin != 0) {
      w.dropped[y - 1] = true;
      if (attrs && w.attrs.is_object()) w.attrs.erase("residual");
    }
  } else if (r == "conv-g") {  // depthwise: channel c of X, filter c and bias c make channel c of Y
    w.regions[0] = range(1, begin, end), w.regions[1] = range(0, begin, end), w.regions[y] = range(1, begin, end);
    if (conv_bias(op)) w.regions[2] = range(0, begin, end);
    if (attrs) w.attrs["groups"] = end - begin;
  } else if (r == "rows") {
    w.regions[0] = range(axis.axis, begin, end), w.regions[y] = range(axis.axis, begin, end);
    // gemm's C (or a matmul's addend) follows the output's rows when it has them, aligned from the right (a
    // broadcast row stays whole).
    if (op.inputs.size() == 3) {  // fc's bias is a vector: it never matches
      const Shape& c = shape_of(graph, op, 2);
      const Shape& out = shape_of(graph, op, y);
      const auto at = static_cast<std::ptrdiff_t>(axis.axis) - static_cast<std::ptrdiff_t>(out.rank()) +
                      static_cast<std::ptrdiff_t>(c.rank());
      if (c.rank() >= 2 && at >= 0 && at + 1 < static_cast<std::ptrdiff_t>(c.rank()) &&
          c[static_cast<std::size_t>(at)] == out[axis.axis] && out[axis.axis] > 1) {
        w.regions[2] = range(static_cast<std::size_t>(at), begin, end);
      }
    }
  } else if (r == "inner") {
    w.regions[0] = range(1, begin, end);
    w.regions[1] = range(b_rows_are_outputs(op) ? 1 : 0, begin, end);
    if (op.inputs.size() == 3) w.dropped[2] = begin != 0;  // the bias or C is added once, by the first piece
  } else if (r == "cols") {
    const std::size_t out_cols = shape_of(graph, op, y).rank() - 1;  // 1, or the last axis of a batch of one
    w.regions[1] = range(axis.axis, begin, end), w.regions[y] = range(out_cols, begin, end);
    if (op.inputs.size() == 3) {
      const Shape& c = shape_of(graph, op, 2);
      const Shape& out = shape_of(graph, op, y);
      // C (or a matmul's bias) follows the output's columns when it has them (a broadcast column stays whole).
      if (c.rank() >= 1 && c[c.rank() - 1] == out[out_cols] && out[out_cols] > 1) {
        w.regions[2] = range(c.rank() - 1, begin, end);
      }
    }
  } else if (r == kFusedRowsRule) {
    fused_work(graph, op, *fused_program(*op.bound), axis, begin, end, w);
  } else if (r == kHeadsRule) {
    attention_work(op, begin, end, w);
  } else if (r == "elementwise") {
    elementwise_work(graph, op, axis, begin, end, w);
  } else if (r == "concat") {
    for (std::size_t k = 0; k <= y; ++k) w.regions[k] = range(axis.axis, begin, end);
  } else if (r == "pool-n" || r == "pool-c" || r == "bn-n" || r == "bn-h" || r == "bn-w") {
    w.regions[0] = range(axis.axis, begin, end), w.regions[y] = range(axis.axis, begin, end);
  }
  if (conv_residual(op)) w.regions[y - 1] = w.regions[y];  // a conv's residual is read where its output is written
}

}  // namespace

void piece_regions(const Graph& graph, const OpNode& op, const SplitAxis& axis, std::uint64_t begin, std::uint64_t end,
                   PieceWork& into) {
  into.attrs = nullptr;
  fill_piece(graph, op, axis, begin, end, false, into);
}

PieceWork piece_work(const Graph& graph, const OpNode& op, const SplitAxis& axis, std::uint64_t begin,
                     std::uint64_t end, nlohmann::json attrs) {
  PieceWork w;
  w.attrs = std::move(attrs);
  fill_piece(graph, op, axis, begin, end, true, w);
  return w;
}

Shape region_shape(const Shape& whole, const TensorRegion& r) {
  if (r.whole) return whole;
  std::vector<std::uint64_t> dims(whole.dims().begin(), whole.dims().end());
  dims[r.axis] = r.end - r.begin;
  return Shape(dims, "piece");
}

std::unique_ptr<BoundOp> bind_piece(const Graph& graph, const OpNode& op, const SplitAxis& axis,
                                    const PieceWork& work) {
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    if (!work.dropped[k]) shapes.push_back(region_shape(graph.tensor(op.inputs[k]).shape, work.regions[k]));
  }
  nlohmann::json attrs = work.attrs.is_null() ? nlohmann::json::object() : work.attrs;
  if (axis.reduces) attrs.erase("activation");  // pieces give partial sums: the activation applies to the whole sum
  return graph.registry().bind(op.type, JsonField(attrs, fmt::format("split of {}", op.label())), shapes);
}

}  // namespace ldmsim
