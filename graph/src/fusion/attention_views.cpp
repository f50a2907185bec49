// The fusion pass's step after the view chains: an attention kernel whose Q, Kt (or K) and V are copied out of other
// tensors by view ops that only it reads (a transformer's q/k/v split of one projection) reads them where they are,
// and one whose Y only a transpose keeping the last axis reads (the heads' merge, [heads, tokens, dim] to
// [tokens, heads, dim]) writes Y's rows where that transpose would put them.
#include <array>
#include <optional>

#include "fusion_internal.hpp"
#include "ldmsim/kernels/attention_kernel.hpp"

namespace ldmsim::fusion {

namespace {

/// The products' sizes read off the attention op's Q [batch..., S, D], Kt [batch..., D, T] and V [batch..., T, E].
AttentionShape shape_of(const Graph& graph, const OpNode& op) {
  const Shape& q = graph.tensor(op.inputs[0]).shape;
  const Shape& kt = graph.tensor(op.inputs[1]).shape;
  const Shape& v = graph.tensor(op.inputs[2]).shape;
  AttentionShape s;
  s.batches = q.product(0, q.rank() - 2);
  s.s = q[q.rank() - 2], s.d = q[q.rank() - 1], s.t = kt[kt.rank() - 1], s.e = v[v.rank() - 1];
  return s;
}

/// The one op reading tensor t when t is not a graph output.
const OpNode* sole_reader(const Graph& graph, std::size_t t) {
  const TensorNode& node = graph.tensor(t);
  if (node.is_output || node.consumers.size() != 1) return nullptr;
  return &graph.ops()[node.consumers[0]];
}

/// The view op that makes input k of `op` for it alone (whether its rows can be read in place is checked later).
const OpNode* sole_view(const Graph& graph, const OpNode& op, std::size_t k) {
  const std::size_t t = op.inputs[k];
  const auto producer = graph.tensor(t).producer;
  if (!producer || sole_reader(graph, t) != &op) return nullptr;
  const OpNode& view = graph.ops()[*producer];
  return view.type == "view" && view.inputs.size() == 1 ? &view : nullptr;
}

/// Where the transpose `op` (of Y [batch..., S, E]; the last axis stays last) puts Y's rows in its output: nullopt
/// when the batch axes do not merge into one stride there.
std::optional<MatrixPlacement> merged_rows(const Graph& graph, const OpNode& op) {
  if (op.type != "transpose" || !op.attrs.is_object() || !op.attrs.contains("perm")) return std::nullopt;
  const Shape& y = graph.tensor(op.inputs[0]).shape;
  const std::size_t rank = y.rank();
  std::vector<std::size_t> perm;
  for (const auto& p : op.attrs["perm"]) {
    const std::int64_t v = p.get<std::int64_t>();
    perm.push_back(static_cast<std::size_t>(v < 0 ? v + static_cast<std::int64_t>(rank) : v));
  }
  if (perm.size() != rank || rank < 2 || perm.back() != rank - 1) return std::nullopt;
  // Each axis of Y's stride in the output.
  std::vector<std::uint64_t> out_natural(rank, 1), stride(rank, 0);
  for (std::size_t d = rank - 1; d-- > 0;) out_natural[d] = out_natural[d + 1] * y[perm[d + 1]];
  for (std::size_t d = 0; d < rank; ++d) stride[perm[d]] = out_natural[d];
  MatrixPlacement at{0, 0, stride[rank - 2]};
  // The batch index b is the sum of each batch axis's index times the later batch axes' dims: one stride when each
  // batch axis of more than one element steps over the next such axis exactly.
  std::optional<std::size_t> previous;
  for (std::size_t a = rank - 2; a-- > 0;) {  // innermost first
    if (y[a] == 1) continue;
    if (!previous) {
      at.batch = stride[a];
    } else if (stride[a] != stride[*previous] * y[*previous]) {
      return std::nullopt;
    }
    previous = a;
  }
  return at;
}

struct Folded {
  std::array<std::size_t, 3> sources{};  ///< tensors the products' operands are read from
  std::size_t output = 0;                ///< the tensor Y is written into
  std::vector<std::size_t> absorbed;     ///< op indices
  std::vector<std::string> roles;
  std::shared_ptr<const BoundOp> bound;
};

std::optional<Folded> fold_one(const Graph& graph, const OpNode& op) {
  if (op.type != "attention" || op.inputs.size() < 3 || op.outputs.size() != 1) return std::nullopt;
  const AttentionShape s = shape_of(graph, op);
  Folded f;
  AttentionViews views;
  const std::array<std::uint64_t, 3> rows{s.s, s.d, s.t}, cols{s.d, s.t, s.e};
  std::array<MatrixPlacement*, 3> placements{&views.q, &views.kt, &views.v};
  for (std::size_t k = 0; k < 3; ++k) {
    f.sources[k] = op.inputs[k];
    *placements[k] = {0, rows[k] * cols[k], cols[k]};
    const OpNode* view = sole_view(graph, op, k);
    if (view == nullptr) continue;
    const auto matrices = view_matrices(*view->bound, s.batches, rows[k], cols[k]);
    if (!matrices || (matrices->transposed && k != 1)) continue;
    *placements[k] = matrices->at;
    if (k == 1) views.k_rows = matrices->transposed;
    f.sources[k] = view->inputs[0];
    f.absorbed.push_back(view->index);
    f.roles.emplace_back(k == 0 ? "Q" : k == 2 ? "V" : views.k_rows ? "K" : "Kt");
  }
  f.output = op.outputs[0];
  views.y = {0, s.s * s.e, s.e};
  if (const OpNode* merge = sole_reader(graph, op.outputs[0]); merge != nullptr && merge->inputs.size() == 1) {
    if (const auto at = merged_rows(graph, *merge)) {
      views.y = *at;
      f.output = merge->outputs[0];
      f.absorbed.push_back(merge->index);
      f.roles.emplace_back("Y");
    }
  }
  if (f.absorbed.empty()) return std::nullopt;
  const std::array<Shape, 3> sources{graph.tensor(f.sources[0]).shape, graph.tensor(f.sources[1]).shape,
                                     graph.tensor(f.sources[2]).shape};
  f.bound = attention_with_views(*op.bound, sources, graph.tensor(f.output).shape, views);
  if (!f.bound) return std::nullopt;
  return f;
}

}  // namespace

Graph fold_views_into_attention(const Graph& graph, std::vector<AttentionViewFold>& folds,
                                std::vector<std::string>& labels) {
  const std::size_t n = graph.ops().size();
  std::vector<std::optional<Folded>> at(n);
  std::vector<char> absorbed(n, 0);
  for (const OpNode& op : graph.ops()) {
    at[op.index] = fold_one(graph, op);
    if (at[op.index]) {
      for (std::size_t o : at[op.index]->absorbed) absorbed[o] = 1;
    }
  }
  Graph out = inputs_of(graph);
  labels.assign(n, std::string());
  for (const OpNode& op : graph.ops()) {
    if (absorbed[op.index]) continue;
    std::vector<std::string> inputs = tensor_names(graph, op.inputs), outputs = tensor_names(graph, op.outputs);
    std::shared_ptr<const BoundOp> bound = op.bound;
    if (const auto& f = at[op.index]) {
      for (std::size_t k = 0; k < 3; ++k) inputs[k] = graph.tensor(f->sources[k]).name;
      outputs[0] = graph.tensor(f->output).name;
      bound = f->bound;
    }
    const std::size_t index = out.add_bound_op(op.type, inputs, outputs, bound, op.name, op.attrs);
    labels[op.index] = out.ops()[index].label();
    if (const auto& f = at[op.index]) {
      AttentionViewFold fold;
      fold.kernel = labels[op.index];
      for (std::size_t o : f->absorbed) fold.ops.push_back(graph.ops()[o].label());
      fold.roles = f->roles;
      folds.push_back(std::move(fold));
    }
  }
  for (std::size_t t : graph.outputs()) out.mark_output(graph.tensor(t).name);
  return out;
}

}  // namespace ldmsim::fusion
