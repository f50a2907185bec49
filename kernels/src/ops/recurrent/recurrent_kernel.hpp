// Private: the device side of lstm / gru. A staging kernel builds W(n) and its bias per direction from W, R and
// B; the step kernel runs every time step of one or more tasks (a direction and a slice of the batch) per core
// group, W(n) cut into the mapping's column partitions and hidden-unit blocks (docs/recurrent.md).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "../op_support.hpp"
#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/kernels/recurrent.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace ldmsim::ops::recurrent {

/// The sizes one step kernel works on.
struct CellShape {
  CellKind kind = CellKind::kLstm;
  bool linear_before_reset = false;  ///< GRU only
  std::size_t input = 0, hidden = 0;
  std::size_t seq = 0, batch = 0, dirs = 1;
  bool reverse_first = false;  ///< direction 0 runs backwards (ONNX "reverse")

  GateMatrixLayout gate_layout() const { return {input, hidden}; }
  bool reverse(std::size_t dir) const { return dir == 1 || reverse_first; }
  /// GRU with linear_before_reset 0: the candidate's recurrent part multiplies r * h_(t-1), a second pass.
  bool two_pass() const { return kind == CellKind::kGru && !linear_before_reset; }
};

/// A device buffer with its layout (tensors of the op) or without (absent optional inputs: ptr 0).
struct TensorRef {
  DevicePtr<f16> ptr;
  Layout layout;
  bool present() const { return ptr.addr() != 0; }
};

/// One task: a direction and batch rows [b0, b1) run by core groups [group, group + groups), with its scratch in
/// main memory.
struct StepTask {
  int group = 0;
  int groups = 1;
  std::size_t dir = 0;
  std::size_t b0 = 0, b1 = 0;
  std::array<DevicePtr<float>, 2> h_exchange;   ///< h_(t-1) in fp32, [b][h_pitch], double-buffered by step
  std::array<DevicePtr<float>, 2> rh_exchange;  ///< r * h_(t-1) (two-pass GRU)
  DevicePtr<float> partials;                    ///< adder-tree slots [group of the task][ep][cores_per_part][rows][b]
};

/// Everything the step kernel reads and writes.
struct StepArgs {
  CellShape shape;
  RecurrentMapping mapping;
  std::vector<DevicePtr<const f16>> gate_matrix;  ///< W(n) per direction
  std::vector<DevicePtr<const float>> gate_bias;  ///< folded bias per direction
  TensorRef x;                                    ///< X, matrix view [(t, b), input]
  TensorRef h0, c0;                               ///< initial states [(d, b), hidden], optional
  TensorRef y, y_h, y_c;                          ///< outputs; y_c absent for GRU
  std::vector<StepTask> tasks;
  /// The EP/VP search's trials: every DMA, barrier and charge as in a real run, the products' host arithmetic
  /// skipped (their values are never read; a kernel's timing does not depend on them).
  bool timing_only = false;
};

/// The tasks of a run: directions spread over the groups (`groups_per_task` each), the batch split when groups are
/// left over. With more than one group per task every group runs exactly one task (node barriers must match).
std::vector<StepTask> plan_tasks(const CellShape& shape, int core_groups, int groups_per_task = 1);
/// The widest batch slice of the tasks.
std::size_t widest_slice(const std::vector<StepTask>& tasks);
/// Allocates each task's scratch in its group's memory, owned by `scratch`, with the exchange buffers' pad columns
/// zeroed.
void allocate_scratch(Machine& machine, DeviceScratch& scratch, const CellShape& shape, const RecurrentMapping& mapping,
                      std::vector<StepTask>& tasks, const std::string& label);

/// Builds W(n) and its bias for every direction (device buffers the caller allocated) from the op's W, R and B
/// (B absent: zero bias). Runs under `label`.
void stage_gate_matrices(Machine& machine, const CellShape& shape, const TensorRef& w, const TensorRef& r,
                         const TensorRef& b, const std::vector<DevicePtr<f16>>& matrices,
                         const std::vector<DevicePtr<float>>& biases, const std::string& label);

/// Runs every time step of every task under `label` and joins.
void run_steps(Machine& machine, const StepArgs& args, const std::string& label);

/// The padded columns of W(n): its row pitch.
inline std::size_t padded_columns(const CellShape& s) {
  return s.gate_layout().row_pitch();
}

}  // namespace ldmsim::ops::recurrent
