// Rows and channels as boxes of a whole tensor (split.hpp, docs/splitting.md): a pointwise conv's piece reading its
// rows of a whole copy where that copy lies, a pointwise op's piece reading its channels so, and a conv's pieces
// writing their rows into one whole output, instead of gathering into buffers of their own or pieces into a whole
// copy.
#include "ldmsim/graph/split.hpp"

namespace ldmsim {

bool rows_in_place(const Graph& graph, const OpNode& consumer, std::size_t k, const TensorRegion& need) {
  constexpr std::size_t kRows = 2;
  const Shape& shape = graph.tensor(consumer.inputs[k]).shape;
  // Rows of NCHW of an even width: every row starts on a whole 4-byte word wherever the box begins.
  if (need.whole || need.axis != kRows || shape.rank() != 4 || shape[3] % 2 != 0) return false;
  // A conv of 1x1 windows reads each element of X (and of a residual) once: its reads cross the link once, as a
  // gather's would, and the gather's launch and writes are saved. A wider window re-reads rows for every tap.
  if (consumer.type != "conv" || consumer.bound->input_role(k) != InputRole::kData) return false;
  const SplitGeometry g = consumer.bound->split_geometry();
  return g.groups == 1 && g.kernel[0] == 1 && g.kernel[1] == 1 && g.dilation == std::array<std::uint64_t, 2>{1, 1};
}

bool channels_in_place(const Graph& graph, const OpNode& consumer, std::string_view rule, std::size_t k,
                       const TensorRegion& need) {
  constexpr std::size_t kChannels = 1;
  if (need.whole || need.axis != kChannels || (rule != "elementwise" && rule != kFusedRowsRule)) return false;
  if (k >= consumer.inputs.size() || consumer.outputs.empty()) return false;
  const TensorNode& in = graph.tensor(consumer.inputs[k]);
  const Shape& shape = in.shape;
  // One sample of fp16 values: its channels [c0, c1) are planes c0..c1 - 1 of a whole copy, back to back, each
  // element read once by a pointwise kernel. An even plane starts every block on a whole 4-byte word.
  return in.dtype == DType::kF16 && shape.rank() == 4 && shape[0] == 1 && (shape[2] * shape[3]) % 2 == 0 &&
         shape == graph.tensor(consumer.outputs[0]).shape;
}

std::optional<OpSplit> rows_into_one(const Graph& graph, const OpNode& op, const OpSplit& s) {
  constexpr std::size_t kRows = 2;
  if (op.type != "conv" || op.outputs.size() != 1 || s.axis.reduces || s.axis.operand != op.inputs.size() ||
      s.axis.axis != kRows) {
    return std::nullopt;
  }
  // The matrix engine writes a box's rows and nothing past them (a depthwise conv writes its layout's extent).
  const Shape& y = graph.tensor(op.outputs[0]).shape;
  if (op.bound->split_geometry().groups != 1 || y.rank() != 4 || y[3] % 2 != 0) return std::nullopt;
  OpSplit whole = s;
  whole.whole_output = true;
  if (!whole.tensor_pieces.empty()) whole.tensor_pieces.back().clear();  // the output is held whole (or none yet)
  return whole;
}

}  // namespace ldmsim
