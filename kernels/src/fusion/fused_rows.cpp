// Cutting a fused op along one of its frame's row axes (a split run's piece): which external tensors hold the axis
// and which of their own axes it is.
#include "ldmsim/kernels/fused_kernel.hpp"

namespace ldmsim {

namespace {

/// The tensor's dims right-aligned to the frame's rank (leading ones); nullopt when it has more axes.
std::optional<std::vector<std::uint64_t>> aligned(const Shape& tensor, std::size_t rank) {
  if (tensor.rank() > rank) return std::nullopt;
  std::vector<std::uint64_t> dims(rank - tensor.rank(), 1);
  dims.insert(dims.end(), tensor.dims().begin(), tensor.dims().end());
  return dims;
}

}  // namespace

bool fused_rows_cut(const FusedProgram& program, std::span<const Shape> tensors, std::size_t axis) {
  const FusionFrame& frame = program.frame;
  if (axis >= frame.k_begin || frame.shape[axis] < 2) return false;
  if (tensors.size() != program.inputs.size() + program.outputs.size()) return false;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const std::size_t v = k < program.inputs.size() ? program.inputs[k] : program.outputs[k - program.inputs.size()];
    // A value that broadcasts along the axis is read whole. One whose dims are not its tensor's shape (a batch
    // norm's [C] parameters seen as [1, C, 1, 1], a reduction's output without its reduced axes) cannot be cut by
    // position.
    if (program.values[v].dims[axis] == 1) continue;
    const auto dims = aligned(tensors[k], frame.shape.rank());
    if (!dims || *dims != program.values[v].dims) return false;
  }
  return true;
}

std::optional<std::size_t> fused_tensor_axis(const FusedProgram& program, const Shape& tensor, std::size_t value,
                                             std::size_t axis) {
  const std::size_t rank = program.frame.shape.rank();
  if (program.values[value].dims[axis] != program.frame.shape[axis] || tensor.rank() + axis < rank) {
    return std::nullopt;  // broadcast along the axis: every piece reads it whole
  }
  return axis + tensor.rank() - rank;
}

}  // namespace ldmsim
