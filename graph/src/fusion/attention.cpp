// Attention: a fused group between two batched products (scores = Q Kt in, probabilities P out, Y = P V after it)
// becomes one op with both products (docs/fusion.md, "Attention"). Only exact shapes match: no broadcast of a batch,
// no folded activation, the scores and probabilities read by nothing else and no graph outputs.
#include <algorithm>

#include "fusion_internal.hpp"

namespace ldmsim::fusion {

namespace {

/// The op if it is a plain matmul (no activation folded into its store, none of its outputs a fold's).
const OpNode* plain_matmul(const Graph& graph, std::optional<std::size_t> op, const std::vector<char>& folded) {
  if (!op || folded[*op] != 0) return nullptr;
  const OpNode& node = graph.ops()[*op];
  if (node.type != "matmul" || node.inputs.size() != 2 || node.outputs.size() != 1) return nullptr;
  if (node.attrs.is_object() && node.attrs.contains("activation")) return nullptr;
  return &node;
}

bool inside(const LoweredGroup& group, std::size_t op) {
  return std::binary_search(group.ops.begin(), group.ops.end(), op);
}

}  // namespace

namespace {

/// The op that makes the product's Q by scaling another tensor by a scalar (div or mul), when Q is read by the
/// product alone; `scalar` receives the scalar's input index.
const OpNode* query_scaling(const Graph& graph, const OpNode& product, const std::vector<char>& folded,
                            std::size_t& scalar) {
  const TensorNode& q = graph.tensor(product.inputs[0]);
  if (!q.producer || q.is_output || q.consumers.size() != 1 || folded[*q.producer] != 0) return nullptr;
  const OpNode& op = graph.ops()[*q.producer];
  if ((op.type != "div" && op.type != "mul") || op.inputs.size() != 2 || op.outputs.size() != 1) return nullptr;
  for (std::size_t k = op.type == "div" ? 1 : 0; k < 2; ++k) {
    const Shape& other = graph.tensor(op.inputs[1 - k]).shape;
    if (graph.tensor(op.inputs[k]).shape.elements() == 1 && other == q.shape && op.inputs[0] != op.inputs[1]) {
      scalar = k;
      return &op;
    }
  }
  return nullptr;
}

}  // namespace

std::optional<AttentionMatch> match_attention(const Graph& graph, const LoweredGroup& group,
                                              const std::vector<char>& folded, const Arch& arch, StagingPolicy policy) {
  const FusedProgram& program = group.program;
  const FusionFrame& frame = program.frame;
  const std::size_t rank = frame.shape.rank();
  if (group.outputs.size() != 1 || rank < 2 || frame.k_begin != rank - 1 || frame.k_end != rank) return std::nullopt;
  // The probabilities: read by one product only, as its left operand.
  const TensorNode& probs = graph.tensor(group.outputs[0]);
  if (probs.is_output || probs.consumers.size() != 1) return std::nullopt;
  const OpNode* second = plain_matmul(graph, probs.consumers[0], folded);
  if (second == nullptr || second->inputs[0] != group.outputs[0] || second->inputs[1] == group.outputs[0]) {
    return std::nullopt;
  }
  // The scores: one input of the group, a product's whole result that only the group reads.
  std::optional<std::size_t> score;
  const OpNode* first = nullptr;
  for (std::size_t k = 0; k < group.inputs.size(); ++k) {
    const TensorNode& t = graph.tensor(group.inputs[k]);
    const OpNode* p = plain_matmul(graph, t.producer, folded);
    if (p == nullptr || t.is_output || t.shape.dims().size() != rank) continue;
    if (!std::all_of(t.consumers.begin(), t.consumers.end(), [&](std::size_t c) { return inside(group, c); })) {
      continue;
    }
    if (std::count(group.inputs.begin(), group.inputs.end(), group.inputs[k]) != 1) continue;
    const FusedValue& v = program.values[program.inputs[k]];
    if (!v.k || v.rows(frame) != frame.rows()) continue;
    score = k;
    first = p;
    break;
  }
  if (!score) return std::nullopt;
  const Shape& q = graph.tensor(first->inputs[0]).shape;
  const Shape& kt = graph.tensor(first->inputs[1]).shape;
  const Shape& v = graph.tensor(second->inputs[1]).shape;
  const Shape& scores = graph.tensor(group.inputs[*score]).shape;
  if (q.rank() != rank || kt.rank() != rank || v.rank() != rank || !(scores == frame.shape) ||
      !(probs.shape == frame.shape)) {
    return std::nullopt;
  }
  AttentionShape shape;
  for (std::size_t a = 0; a + 2 < rank; ++a) {
    if (q[a] != frame.shape[a] || kt[a] != frame.shape[a] || v[a] != frame.shape[a]) return std::nullopt;
    shape.batches *= frame.shape[a];
  }
  shape.s = q[rank - 2];
  shape.d = q[rank - 1];
  shape.t = kt[rank - 1];
  shape.e = v[rank - 1];
  if (kt[rank - 2] != shape.d || v[rank - 2] != shape.t || frame.shape[rank - 2] != shape.s ||
      frame.shape[rank - 1] != shape.t) {
    return std::nullopt;
  }
  // The kernel reads whole rows of Q, Kt, V, Y and a mask; naive staging pads a row of an odd element count inside.
  if (policy == StagingPolicy::kNaive && (shape.d % 2 == 1 || shape.t % 2 == 1 || shape.e % 2 == 1)) {
    return std::nullopt;
  }
  AttentionMatch m;
  m.first = first->index;
  m.second = second->index;
  m.score_input = *score;
  m.shape = shape;
  m.inputs = {first->inputs[0], first->inputs[1], second->inputs[1]};
  for (std::size_t k = 0; k < group.inputs.size(); ++k) {
    if (k != *score) m.inputs.push_back(group.inputs[k]);
  }
  std::size_t scalar = 0;
  if (const OpNode* scaling = policy == StagingPolicy::kNone ? nullptr : query_scaling(graph, *first, folded, scalar)) {
    m.scale = scaling->type == "div" ? QueryScale::kDivide : QueryScale::kMultiply;
    m.scaling = scaling->index;
    m.inputs[0] = scaling->inputs[1 - scalar];
    m.inputs.push_back(scaling->inputs[scalar]);
  }
  // Each tensor once: the op's views of Q, Kt and V differ from any other use of the same tensor.
  std::vector<std::size_t> distinct = m.inputs;
  std::sort(distinct.begin(), distinct.end());
  if (std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end()) return std::nullopt;
  auto mapping = choose_attention_mapping(program, *score, shape, arch);
  if (!mapping) return std::nullopt;
  m.mapping = std::move(*mapping);
  m.output = second->outputs[0];
  m.ops = group.ops;
  m.ops.push_back(m.first);
  m.ops.push_back(m.second);
  if (m.scaling) m.ops.push_back(*m.scaling);
  std::sort(m.ops.begin(), m.ops.end());
  return m;
}

std::shared_ptr<const BoundOp> bind_attention(const Graph& graph, const LoweredGroup& group, const AttentionMatch& m,
                                              const std::string& arch) {
  std::vector<Shape> in;
  for (std::size_t t : m.inputs) in.push_back(graph.tensor(t).shape);
  Composed c = compose_members(graph, m.ops, m.inputs, {m.output});
  return make_attention_op(group.program, m.score_input, m.shape, m.scale, m.mapping, std::move(in),
                           graph.tensor(m.output).shape, std::move(c.reference), c.tolerance, c.flops, arch);
}

}  // namespace ldmsim::fusion
