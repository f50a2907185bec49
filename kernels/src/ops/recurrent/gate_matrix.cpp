// The combined gate matrix W(n): which rows of W and R, and which bias terms, make each of its rows, and the
// host-side builder that tests and docs check the layout with (the staging kernel follows gate_row_source too).
#include <fmt/format.h>

#include <stdexcept>

#include "ldmsim/kernels/recurrent.hpp"

namespace ldmsim {

GateRowSource gate_row_source(CellKind kind, std::size_t slot) {
  if (slot > 3) throw std::out_of_range(fmt::format("gate slot {} (0..3)", slot));
  const int k = static_cast<int>(slot);
  if (kind == CellKind::kLstm) return {k, k, k, k};  // i, o, f, c: both halves and both biases
  switch (slot) {
    case 0:
    case 1:
      return {k, k, k, k};  // z, r
    case 2:
      return {2, -1, 2, -1};  // the candidate's input part W_h x + Wb_h
    default:
      return {-1, 2, -1, 2};  // its recurrent part R_h h + Rb_h, gated by r separately
  }
}

CombinedGates combine_gates(CellKind kind, GateMatrixLayout layout, std::size_t dir, std::span<const float> w,
                            std::span<const float> r, std::span<const float> b) {
  const std::size_t gates = onnx_gates(kind), lh = layout.hidden, lx = layout.input;
  const std::size_t w_dir = gates * lh * lx, r_dir = gates * lh * lh, b_dir = 2 * gates * lh;
  if (w.size() < (dir + 1) * w_dir || r.size() < (dir + 1) * r_dir || (!b.empty() && b.size() < (dir + 1) * b_dir)) {
    throw std::invalid_argument("combine_gates: W, R or B is smaller than the direction's slice");
  }
  CombinedGates out{layout, std::vector<float>(layout.elements(), 0.0f), std::vector<float>(layout.rows(), 0.0f)};
  for (std::size_t u = 0; u < lh; ++u) {
    for (std::size_t k = 0; k < 4; ++k) {
      const GateRowSource src = gate_row_source(kind, k);
      const std::size_t row = 4 * u + k;
      float* dst = out.matrix.data() + row * layout.row_pitch();
      if (src.w_gate >= 0) {
        const float* from = w.data() + dir * w_dir + (static_cast<std::size_t>(src.w_gate) * lh + u) * lx;
        std::copy(from, from + lx, dst);
      }
      if (src.r_gate >= 0) {
        const float* from = r.data() + dir * r_dir + (static_cast<std::size_t>(src.r_gate) * lh + u) * lh;
        std::copy(from, from + lh, dst + layout.x_pitch());
      }
      if (b.empty()) continue;
      const float* bias = b.data() + dir * b_dir;  // [Wb of every gate, then Rb of every gate]
      if (src.wb_gate >= 0) out.bias[row] += bias[static_cast<std::size_t>(src.wb_gate) * lh + u];
      if (src.rb_gate >= 0) out.bias[row] += bias[(gates + static_cast<std::size_t>(src.rb_gate)) * lh + u];
    }
  }
  return out;
}

}  // namespace ldmsim
