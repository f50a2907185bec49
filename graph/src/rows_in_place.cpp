// Rows as boxes of a whole tensor (split.hpp, docs/splitting.md): a pointwise conv's piece reading its rows of a
// whole copy where that copy lies, and a conv's pieces writing their rows into one whole output, instead of
// gathering rows into buffers of their own or pieces into a whole copy.
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
  whole.tensor_pieces.back().clear();  // the output is held whole
  return whole;
}

}  // namespace ldmsim
