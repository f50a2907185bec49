// The fusion pass's last step: a reshape (or flatten) whose input other ops read after it copies, because the
// input's buffer cannot be handed over while it is still read. A transformer's batch-first input seen sequence-first
// ([1, S, H] as [S, 1, H]) and read again by the residual add is such a reshape. The later readers instead read the
// reshape's output reshaped back, just before the first of them: both reshapes then hand their buffer over (each
// input dies there), and nothing is copied. Done only when the output is not read after that point (its buffer
// must be free to hand over) and neither tensor is a graph output.
#include <fmt/format.h>

#include <algorithm>

#include "fusion_internal.hpp"

namespace ldmsim::fusion {

namespace {

/// The first op after `op` that reads its input, when `op` reinterprets an fp16 input that ops after it read and
/// its output is read by nothing at or after that op.
std::optional<std::size_t> later_reader(const Graph& graph, const OpNode& op) {
  if (!op.bound->reinterprets_input() || op.inputs.size() != 1 || op.outputs.size() != 1) return std::nullopt;
  const TensorNode& x = graph.tensor(op.inputs[0]);
  const TensorNode& y = graph.tensor(op.outputs[0]);
  if (x.dtype != DType::kF16 || x.is_output || y.is_output) return std::nullopt;
  std::optional<std::size_t> first;
  for (std::size_t c : x.consumers) {
    if (c > op.index && (!first || c < *first)) first = c;
  }
  if (!first) return std::nullopt;
  if (std::any_of(y.consumers.begin(), y.consumers.end(), [&](std::size_t c) { return c >= *first; })) {
    return std::nullopt;
  }
  return first;
}

}  // namespace

Graph reshape_back(const Graph& graph, std::vector<std::string>& labels) {
  const std::size_t n = graph.ops().size();
  std::vector<std::vector<std::size_t>> before(n);    // reshapes to insert before op i
  std::vector<char> done(graph.tensors().size(), 0);  // one reshape back per tensor: its later readers all move
  for (const OpNode& op : graph.ops()) {
    const auto first = later_reader(graph, op);
    if (!first || done[op.inputs[0]]) continue;
    done[op.inputs[0]] = 1;
    before[*first].push_back(op.index);
  }
  labels.assign(n, std::string());
  if (std::all_of(before.begin(), before.end(), [](const auto& b) { return b.empty(); })) return Graph{};
  Graph out = inputs_of(graph);
  std::vector<std::string> reads(graph.tensors().size());  // what the later readers of a tensor read instead
  for (const OpNode& op : graph.ops()) {
    for (std::size_t r : before[op.index]) {
      const OpNode& reshape = graph.ops()[r];
      const TensorNode& x = graph.tensor(reshape.inputs[0]);
      std::string back = fmt::format("{}:back", x.name);
      for (int k = 2; graph.find(back) || out.find(back); ++k) back = fmt::format("{}:back{}", x.name, k);
      const nlohmann::json attrs = {{"shape", x.shape.dims()}};
      out.add_op(graph.registry(), "reshape", {graph.tensor(reshape.outputs[0]).name}, {back},
                 JsonField(attrs, "the fusion pass's reshape back"), fmt::format("{}:back", reshape.layer()));
      reads[reshape.inputs[0]] = back;
    }
    std::vector<std::string> inputs = tensor_names(graph, op.inputs);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (!reads[op.inputs[k]].empty()) inputs[k] = reads[op.inputs[k]];
    }
    const std::size_t index =
        out.add_bound_op(op.type, inputs, tensor_names(graph, op.outputs), op.bound, op.name, op.attrs);
    labels[op.index] = out.ops()[index].label();
  }
  for (std::size_t t : graph.outputs()) out.mark_output(graph.tensor(t).name);
  return out;
}

}  // namespace ldmsim::fusion
