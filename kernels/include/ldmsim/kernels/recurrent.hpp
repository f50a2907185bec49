// Recurrent layers (lstm, gru): the combined gate matrix W(n) that staging builds from ONNX's W, R and B, and
// the EP/VP mapping of its column-wise streaming matrix-vector product onto a core group. docs/recurrent.md
// describes both; kernels/src/ops/recurrent*.cpp hold the operators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ldmsim {

/// The two cells, with ONNX semantics.
enum class CellKind : std::uint8_t { kLstm, kGru };

/// Gates of a cell in ONNX's W/R/B order: LSTM i, o, f, c; GRU z, r, h.
constexpr std::size_t onnx_gates(CellKind kind) {
  return kind == CellKind::kLstm ? 4 : 3;
}

/// The layout of W(n) for one direction: 4*hidden rows interleaved by gate slot (row 4u + k is slot k of hidden
/// unit u), each row [x part | h part] multiplying the column vector [x_t, h_(t-1)]. Each part is padded to an
/// even number of columns with zeros, so every row, every part and every even column range starts on a 4-byte
/// boundary in fp16 whatever the sizes. Slots: LSTM i, o, f, c (ONNX order); GRU z, r, then the candidate's
/// input part (W_h, zeros under h) and its recurrent part (zeros under x, R_h), kept apart because reset gates
/// them separately.
struct GateMatrixLayout {
  std::size_t input = 0;   ///< lx
  std::size_t hidden = 0;  ///< lh

  std::size_t x_pitch() const { return input + input % 2; }
  std::size_t h_pitch() const { return hidden + hidden % 2; }
  std::size_t row_pitch() const { return x_pitch() + h_pitch(); }
  std::size_t rows() const { return 4 * hidden; }
  std::size_t elements() const { return rows() * row_pitch(); }
  /// The padded column of element j of [x_t, h_(t-1)].
  std::size_t column(std::size_t j) const { return j < input ? j : x_pitch() + (j - input); }
};

/// Where W(n)'s row (unit u, slot k) comes from: a row of W and/or a row of R (gate index in ONNX order, or
/// none), and the bias terms folded into it (Wb and/or Rb of a gate).
struct GateRowSource {
  int w_gate = -1;   ///< row w_gate*hidden + u of W, or -1 for zeros
  int r_gate = -1;   ///< row r_gate*hidden + u of R, or -1 for zeros
  int wb_gate = -1;  ///< Wb[wb_gate*hidden + u] added to the row's bias, or -1
  int rb_gate = -1;  ///< Rb[rb_gate*hidden + u] added, or -1
};
GateRowSource gate_row_source(CellKind kind, std::size_t slot);

/// W(n) and its folded bias (one fp32 value per row) for direction `dir`, built on the host from the logical
/// ONNX tensors W [dirs, gates*hidden, input], R [dirs, gates*hidden, hidden] and B [dirs, 2*gates*hidden] (empty:
/// zeros). The device staging kernel builds the same layout (fp16 matrix, fp32 bias) from gate_row_source.
struct CombinedGates {
  GateMatrixLayout layout;
  std::vector<float> matrix;  ///< layout.elements(), zeros in the pads
  std::vector<float> bias;    ///< layout.rows()
};
CombinedGates combine_gates(CellKind kind, GateMatrixLayout layout, std::size_t dir, std::span<const float> w,
                            std::span<const float> r, std::span<const float> b);

/// How one direction's step is spread over a core group: `ep` column partitions of W(n) (elements of the vector
/// consumed in parallel), each with `cores_per_part` cores splitting the hidden units; `vp` rows in parallel.
struct RecurrentMapping {
  /// Core groups sharing one direction and batch slice: each holds W(n)'s rows of its share of the hidden units
  /// (a layer too large for one group's ldm stays resident on several); h_t is exchanged at node barriers.
  std::size_t groups = 1;
  std::size_t ep = 1;
  std::size_t vp = 1;
  std::size_t cores_per_part = 1;
  std::size_t active_cores = 1;     ///< cores of a partition that hold hidden units
  std::size_t units_per_core = 1;   ///< hidden units (4 rows each) per core, even except when hidden is 1
  std::size_t units_per_group = 1;  ///< hidden units per group of the task (even except when hidden is 1)
  std::size_t column_block = 2;     ///< padded columns of W(n) per partition (even)
  bool resident = true;             ///< each core's block of W(n) stays in ldm across steps (else streamed)
};

/// One candidate of the EP/VP search with its simulated cycles per time step.
struct MappingCandidate {
  RecurrentMapping mapping;
  double cycles_per_step = 0;
};

/// The search's record: every candidate tried, in order, and the one chosen.
struct MappingChoice {
  std::vector<MappingCandidate> candidates;
  std::size_t chosen = 0;
  std::size_t npe = 0;  ///< multiply lanes of the group: cores x fp32 SIMD lanes
  const RecurrentMapping& mapping() const { return candidates.at(chosen).mapping; }
  /// One line per candidate and the choice, for `ldmsim run --explain`.
  std::vector<std::string> describe() const;
};

}  // namespace ldmsim
