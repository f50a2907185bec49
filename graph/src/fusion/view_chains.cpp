// The fusion pass's last step: chains of view steps (ldmsim/kernels/view_chain.hpp) become one strided copy, or one
// swap reading in place when a transpose that moves the last axis ends them. Each op of a chain would read and
// write every element once; the composed op does it once for the whole chain.

#include <algorithm>

#include "fusion_internal.hpp"
#include "ldmsim/kernels/view_chain.hpp"

namespace ldmsim::fusion {

namespace {

/// The op that alone reads `op`'s one output when it is a view step (or a swap, which ends a chain) and the output
/// is not a graph output.
const OpNode* next_step(const Graph& graph, const OpNode& op) {
  const TensorNode& out = graph.tensor(op.outputs[0]);
  if (out.is_output || out.consumers.size() != 1) return nullptr;
  const OpNode& reader = graph.ops()[out.consumers[0]];
  const bool step = is_view_step(*reader.bound) || is_swap_step(*reader.bound);
  return reader.inputs.size() == 1 && step ? &reader : nullptr;
}

struct Chain {
  std::vector<std::size_t> ops;
  std::shared_ptr<const BoundOp> composed;
};

/// The longest chain from `first` whose composition is one strided view.
Chain chain_from(const Graph& graph, const OpNode& first) {
  Chain chain;
  std::vector<const BoundOp*> bound;
  for (const OpNode* op = &first; op != nullptr; op = next_step(graph, *op)) {
    bound.push_back(op->bound.get());
    std::unique_ptr<BoundOp> composed = compose_view_chain(bound);
    if (!composed) break;
    chain.ops.push_back(op->index);
    chain.composed = std::move(composed);
    if (is_swap_step(*op->bound)) break;  // a swap ends a chain: what follows reads its transposed matrices
  }
  return chain;
}

std::size_t copies_in(const Graph& graph, const Chain& chain) {
  return static_cast<std::size_t>(std::count_if(
      chain.ops.begin(), chain.ops.end(), [&](std::size_t o) { return !is_reinterpretation(*graph.ops()[o].bound); }));
}

}  // namespace

Graph fold_view_chains(const Graph& graph, std::vector<ViewChainFold>& folds, std::vector<std::string>& labels) {
  const std::size_t n = graph.ops().size();
  std::vector<char> taken(n, 0);
  std::vector<std::optional<Chain>> ending_at(n);  // a folded chain, at its last op
  for (const OpNode& op : graph.ops()) {
    if (taken[op.index] || op.inputs.size() != 1 || !is_view_step(*op.bound)) continue;
    Chain chain = chain_from(graph, op);
    if (copies_in(graph, chain) < 2) continue;
    for (std::size_t o : chain.ops) taken[o] = 1;
    ending_at[chain.ops.back()] = std::move(chain);
  }
  Graph out = inputs_of(graph);
  const auto names = [&](const std::vector<std::size_t>& tensors) { return tensor_names(graph, tensors); };
  labels.assign(n, std::string());
  for (const OpNode& op : graph.ops()) {
    if (const auto& chain = ending_at[op.index]) {
      const OpNode& first = graph.ops()[chain->ops.front()];
      const std::size_t index = out.add_bound_op("view", names(first.inputs), names(op.outputs), chain->composed,
                                                 joined_name(graph, chain->ops));
      ViewChainFold fold;
      for (std::size_t o : chain->ops) fold.ops.push_back(graph.ops()[o].label());
      fold.kernel = out.ops()[index].label();
      folds.push_back(std::move(fold));
    } else if (!taken[op.index]) {
      labels[op.index] =
          out.ops()[out.add_bound_op(op.type, names(op.inputs), names(op.outputs), op.bound, op.name, op.attrs)]
              .label();
    }
  }
  for (std::size_t t : graph.outputs()) out.mark_output(graph.tensor(t).name);
  return out;
}

}  // namespace ldmsim::fusion
