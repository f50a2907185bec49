// The fusion pass's last step (docs/fusion.md, "Heads side by side"): an attention kernel that reads Q, K and V in
// place from one projection, whose columns are [q | k | v] with each part's heads in turn (a transformer's fused
// input projection), has the projection's weight and bias columns reordered by head, [head][q, k, v][d], so that the
// columns of any run of consecutive heads are one range: a split of the projection by columns then leaves each core
// group the q, k and v of its heads, which an attention split by heads reads in the group's own memory. Every
// output column is the same dot product as before, so every value is the same, only placed elsewhere.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>

#include "fusion_internal.hpp"
#include "ldmsim/graph/executor.hpp"

namespace ldmsim::fusion {

namespace {

/// True when op `op` alone reads tensor t, a constant of the model (an ONNX initializer, a workload tensor marked
/// constant): a tensor that may be given at run time keeps the values' order the caller gives.
bool constant_of(const Graph& graph, std::size_t t, const OpNode& op) {
  const TensorNode& node = graph.tensor(t);
  return node.is_input() && !node.producer && !node.is_output && node.dtype == DType::kF16 &&
         node.init.constant.value_or(false) && !node.consumers.empty() &&
         std::all_of(node.consumers.begin(), node.consumers.end(), [&](std::size_t c) { return c == op.index; });
}

/// What the pass changes for one attention kernel.
struct Reorder {
  std::size_t attention = 0, projection = 0;  ///< op indices
  std::size_t weight = 0;                     ///< tensor indices
  std::optional<std::size_t> bias;
  std::uint64_t heads = 0, depth = 0, columns = 0;
  std::array<std::uint64_t, 3> part{};  ///< Q's, K's and V's part of the projection's columns (0, 1 or 2)
};

std::optional<Reorder> match(const Graph& graph, const OpNode& op) {
  if (op.type != "attention" || op.inputs.size() < 3 || op.outputs.size() != 1) return std::nullopt;
  const auto layout = attention_layout(*op.bound);
  if (!layout || !layout->views || !layout->views->k_rows) return std::nullopt;
  const AttentionShape& s = layout->shape;
  const std::size_t t = op.inputs[0];
  if (op.inputs[1] != t || op.inputs[2] != t || s.d != s.e || s.s != s.t || s.batches < 2) return std::nullopt;
  const TensorNode& qkv = graph.tensor(t);
  if (qkv.is_output || !qkv.producer ||
      !std::all_of(qkv.consumers.begin(), qkv.consumers.end(), [&](std::size_t c) { return c == op.index; })) {
    return std::nullopt;
  }
  const OpNode& projection = graph.ops()[*qkv.producer];
  if (projection.type != "matmul" || projection.inputs.size() < 2 || projection.inputs.size() > 3 ||
      projection.outputs.size() != 1) {
    return std::nullopt;
  }
  Reorder r;
  r.attention = op.index;
  r.projection = projection.index;
  r.weight = projection.inputs[1];
  r.heads = s.batches;
  r.depth = s.d;
  r.columns = qkv.shape[qkv.shape.rank() - 1];
  const Shape& w = graph.tensor(r.weight).shape;
  if (!constant_of(graph, r.weight, projection) || w.rank() != 2 || w[1] != r.columns ||
      r.columns != 3 * r.heads * r.depth || qkv.shape.elements() / r.columns != s.s) {
    return std::nullopt;
  }
  if (projection.inputs.size() == 3) {
    r.bias = projection.inputs[2];
    const Shape& b = graph.tensor(*r.bias).shape;
    if (!constant_of(graph, *r.bias, projection) || b.elements() != r.columns || b[b.rank() - 1] != r.columns) {
      return std::nullopt;
    }
  }
  // Q, K and V each a part of the columns, heads side by side, rows one projection row apart.
  const AttentionViews& v = *layout->views;
  const std::array<const MatrixPlacement*, 3> at{&v.q, &v.kt, &v.v};
  std::array<bool, 3> seen{};
  for (std::size_t k = 0; k < 3; ++k) {
    const std::uint64_t width = r.heads * r.depth;
    if (at[k]->batch != r.depth || at[k]->pitch != r.columns || at[k]->offset % width != 0) return std::nullopt;
    r.part[k] = at[k]->offset / width;
    if (r.part[k] > 2 || seen[r.part[k]]) return std::nullopt;
    seen[r.part[k]] = true;
  }
  return r;
}

/// `t`'s initial values with their last axis's columns reordered head-major: in each row, part p's columns of head
/// h ([p x heads x depth + h x depth, + depth)) move to [3 x depth x h + p x depth, + depth).
TensorInit reordered(const TensorNode& t, const Reorder& r) {
  const SharedHalves values = initial_values(t);
  // Written once, start to end, in ordinary pages: a buffer advised into huge pages (fresh_huge_buffer) stalled
  // the fusion phase of many runs for about 20 ms on a VM (the guest compacting memory, or the host backing it).
  const std::shared_ptr<std::byte> buffer(new std::byte[values.size() * sizeof(f16)],
                                          std::default_delete<std::byte[]>());
  f16* const out = reinterpret_cast<f16*>(buffer.get());
  const std::uint64_t rows = values.size() / r.columns;
  for (std::uint64_t i = 0; i < rows; ++i) {
    const f16* from = values.data() + i * r.columns;
    f16* to = out + i * r.columns;
    for (std::uint64_t part = 0; part < 3; ++part) {
      for (std::uint64_t h = 0; h < r.heads; ++h) {
        const f16* run = from + (part * r.heads + h) * r.depth;
        std::copy(run, run + r.depth, to + (3 * h + part) * r.depth);
      }
    }
  }
  TensorInit init = t.init;
  init.kind = TensorInit::Kind::kData;
  init.data = SharedHalves(buffer, out, values.size());
  return init;
}

}  // namespace

Graph head_major_projections(const Graph& graph, std::vector<HeadMajorFold>& folds) {
  std::vector<std::optional<Reorder>> at(graph.ops().size());
  std::vector<std::optional<TensorInit>> init(graph.tensors().size());
  std::vector<std::shared_ptr<const BoundOp>> bound(graph.ops().size());
  for (const OpNode& op : graph.ops()) {
    std::optional<Reorder> r = match(graph, op);
    if (!r) continue;
    AttentionViews views = *attention_layout(*op.bound)->views;
    const std::array<MatrixPlacement*, 3> placed{&views.q, &views.kt, &views.v};
    for (std::size_t k = 0; k < 3; ++k) *placed[k] = {r->part[k] * r->depth, 3 * r->depth, r->columns};
    const Shape& source = graph.tensor(op.inputs[0]).shape;
    bound[op.index] =
        attention_with_views(*op.bound, {source, source, source}, graph.tensor(op.outputs[0]).shape, views);
    if (!bound[op.index]) continue;
    init[r->weight] = reordered(graph.tensor(r->weight), *r);
    if (r->bias) init[*r->bias] = reordered(graph.tensor(*r->bias), *r);
    at[op.index] = r;
  }
  if (std::none_of(at.begin(), at.end(), [](const auto& r) { return r.has_value(); })) return Graph{};
  Graph out;  // inputs_of, with the reordered constants' values
  out.name = graph.name;
  out.arch = graph.arch;
  out.staging = graph.staging;
  out.set_registry(graph.shared_registry());
  for (std::size_t t = 0; t < graph.tensors().size(); ++t) {
    const TensorNode& node = graph.tensor(t);
    if (node.is_input()) out.add_input(node.name, node.shape, init[t] ? *init[t] : node.init, node.dtype);
  }
  for (const OpNode& op : graph.ops()) {
    out.add_bound_op(op.type, tensor_names(graph, op.inputs), tensor_names(graph, op.outputs),
                     bound[op.index] ? bound[op.index] : op.bound, op.name, op.attrs);
    if (const auto& r = at[op.index]) {
      folds.push_back({graph.ops()[r->attention].label(), graph.ops()[r->projection].label(), r->heads});
    }
  }
  for (std::size_t t : graph.outputs()) out.mark_output(graph.tensor(t).name);
  return out;
}

}  // namespace ldmsim::fusion
