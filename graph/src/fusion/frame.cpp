// Which ops may share a group: the frame of their backbone (or, with none, of their broadcast shape) and the check
// that every tensor propagates its index through it.
#include <algorithm>

#include "fusion_internal.hpp"

namespace ldmsim::fusion {

namespace {

/// A pointwise group's rows are cut so that a row holds at most this many elements when the tensors allow it: a
/// longer row (a whole plane of a large feature map) would only shrink the tiles.
constexpr std::uint64_t kMaxPointwiseRow = 4096;

/// True when dims [from, to) are either all the frame's or all 1 (axes where the frame is 1 count as both).
bool block_is_clean(const std::vector<std::uint64_t>& dims, const Shape& s, std::size_t from, std::size_t to) {
  bool full = false, broadcast = false;
  for (std::size_t a = from; a < to; ++a) {
    if (s[a] == 1) continue;
    if (dims[a] == s[a]) {
      full = true;
    } else if (dims[a] == 1) {
      broadcast = true;
    } else {
      return false;
    }
  }
  return !(full && broadcast);
}

/// True when every tensor of every op propagates the frame's index and every op output is full on the rows.
bool propagates(const Graph& graph, const std::vector<std::size_t>& ops, const FusionFrame& frame) {
  for (std::size_t o : ops) {
    const OpNode& op = graph.ops()[o];
    for (std::size_t k = 0; k <= op.inputs.size(); ++k) {
      if (!operand_propagates(operand_dims(graph, op, k), k == op.inputs.size(), frame)) return false;
    }
  }
  return true;
}

}  // namespace

bool is_backbone(const FusionForm& f) {
  return f.kind == FusionForm::Kind::kReduce || f.kind == FusionForm::Kind::kSoftmax ||
         f.kind == FusionForm::Kind::kLayerNorm;
}

/// A backbone's own frame: its input's shape, K = the reduced block (trailing from the axis for the
/// normalisations).
FusionFrame backbone_frame(const Graph& graph, const OpNode& op, const FusionForm& f) {
  const Shape& x = graph.tensor(op.inputs[0]).shape;
  const std::size_t end = f.kind == FusionForm::Kind::kReduce ? f.axis_end : x.rank();
  return FusionFrame{x, f.axis_begin, end};
}

FusionForm form_of(const OpNode& op) {
  if (op.outputs.size() != 1) return {};
  return op.bound->fusion_form();
}

std::vector<std::uint64_t> operand_dims(const Graph& graph, const OpNode& op, std::size_t k) {
  const FusionForm f = form_of(op);
  const bool output = k == op.inputs.size();
  Shape shape = output ? graph.tensor(op.outputs[0]).shape : graph.tensor(op.inputs[k]).shape;
  std::vector<std::uint64_t> dims(shape.dims().begin(), shape.dims().end());
  if (output && f.kind == FusionForm::Kind::kReduce && !f.keepdims) {
    const Shape& x = graph.tensor(op.inputs[0]).shape;
    dims.assign(x.dims().begin(), x.dims().end());
    for (std::size_t a = f.axis_begin; a < f.axis_end; ++a) dims[a] = 1;
    // Axes of size 1 outside the block that were listed are gone from the output but are 1 here: same elements.
  }
  if (!output && k > 0 && f.kind == FusionForm::Kind::kBatchNorm) {
    dims = {1, shape[0], 1, 1};  // [C] of an NCHW input
  }
  return dims;
}

std::optional<std::vector<std::uint64_t>> aligned_dims(const Graph& graph, const OpNode& op, std::size_t k,
                                                       std::size_t rank) {
  std::vector<std::uint64_t> dims = operand_dims(graph, op, k);
  if (dims.size() > rank) return std::nullopt;
  dims.insert(dims.begin(), rank - dims.size(), 1);
  return dims;
}

bool operand_propagates(const std::vector<std::uint64_t>& operand, bool output, const FusionFrame& frame) {
  const Shape& s = frame.shape;
  if (operand.size() > s.rank()) return false;
  std::vector<std::uint64_t> dims(s.rank() - operand.size(), 1);
  dims.insert(dims.end(), operand.begin(), operand.end());
  for (std::size_t a = 0; a < s.rank(); ++a) {
    if (dims[a] != 1 && dims[a] != s[a]) return false;
  }
  if (!block_is_clean(dims, s, frame.k_begin, frame.k_end) || !block_is_clean(dims, s, frame.k_end, s.rank())) {
    return false;
  }
  if (output) {  // an output: written by the cores that own its rows
    for (std::size_t a = 0; a < frame.k_begin; ++a) {
      if (dims[a] != s[a]) return false;
    }
  }
  return true;
}

std::optional<FusionFrame> group_frame(const Graph& graph, const std::vector<std::size_t>& ops,
                                       std::vector<std::size_t>* backbones) {
  const auto frames = frame_candidates(graph, ops, backbones);
  if (frames.empty()) return std::nullopt;
  return frames.front();
}

std::vector<FusionFrame> frame_candidates(const Graph& graph, const std::vector<std::size_t>& ops,
                                          std::vector<std::size_t>* backbones) {
  std::optional<FusionFrame> frame;
  std::vector<std::size_t> found;
  std::optional<Shape> broadcast;
  for (std::size_t o : ops) {
    const OpNode& op = graph.ops()[o];
    const FusionForm f = form_of(op);
    if (f.kind == FusionForm::Kind::kNone) return {};
    if (is_backbone(f)) {
      const FusionFrame mine = backbone_frame(graph, op, f);
      if (frame && !(frame->shape == mine.shape && frame->k_begin == mine.k_begin && frame->k_end == mine.k_end)) {
        return {};  // two backbones of different frames: index propagation cannot link them
      }
      frame = mine;
      found.push_back(o);
    }
    // A reduction without keepdims changes rank: nothing of the group may read its output.
    if (f.kind == FusionForm::Kind::kReduce && !f.keepdims) {
      for (std::size_t c : graph.tensor(op.outputs[0]).consumers) {
        if (std::binary_search(ops.begin(), ops.end(), c)) return {};
      }
    }
    try {
      const Shape& y = graph.tensor(op.outputs[0]).shape;
      broadcast = broadcast ? broadcast_shapes(*broadcast, y) : y;
    } catch (const ConfigError&) {
      return {};
    }
  }
  if (backbones != nullptr) *backbones = found;
  if (frame) {
    if (!propagates(graph, ops, *frame)) return {};
    return {*frame};
  }
  // No backbone: rows and an inner block I. Preferred: the longest I that propagates and stays short, then
  // shorter ones (smaller tiles when ldm is short), then longer ones.
  std::vector<FusionFrame> shorter, longer;
  for (std::size_t split = 0; split <= broadcast->rank(); ++split) {
    const FusionFrame f{*broadcast, split, split};
    if (!propagates(graph, ops, f)) continue;
    (f.i() <= kMaxPointwiseRow ? shorter : longer).push_back(f);
  }
  shorter.insert(shorter.end(), longer.rbegin(), longer.rend());
  return shorter;
}

}  // namespace ldmsim::fusion
