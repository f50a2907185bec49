// Building W(n) on the device: every core takes whole hidden units (dealt round-robin over all cores of all
// groups) and, per unit, gathers its four rows from W and R (any layout), zero-padded, puts each row of W(n) in
// pieces of at most 2048 elements, then the unit's four folded biases (fp32). Also the run's task plan and scratch
// buffers.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "../op_support.hpp"
#include "recurrent_kernel.hpp"

namespace ldmsim::ops::recurrent {

namespace {

struct StageArgs {
  CellShape shape;
  TensorRef w, r, b;
  std::vector<DevicePtr<f16>> matrices;
  std::vector<DevicePtr<float>> biases;
};

void stage_kernel(Core& core, const StageArgs& a) {
  const CellShape& s = a.shape;
  const GateMatrixLayout gl = s.gate_layout();
  const std::size_t gates = onnx_gates(s.kind), units = s.dirs * s.hidden;
  const std::size_t me = tiling::worker_index(core), workers = tiling::worker_count(core);
  if (me >= units) return;
  // A row moves in even pieces of at most kPiece elements, so any row width fits the local store.
  constexpr std::size_t kPiece = 2048;
  auto piece = core.ldm().alloc<f16>(std::min(kPiece, gl.row_pitch()));
  auto bias = core.ldm().alloc<float>(4);
  auto buf = core.ldm().alloc<f16>(std::min(piece.size() + 2, std::size_t{4096}));
  std::array<f16, 2> bias_halves{};
  for (std::size_t unit = me; unit < units; unit += workers) {
    const std::size_t d = unit / s.hidden, u = unit % s.hidden;
    for (std::size_t k = 0; k < 4; ++k) {
      const GateRowSource src = gate_row_source(s.kind, k);
      const auto gate_row = [&](int gate) { return (d * gates + static_cast<std::size_t>(gate)) * s.hidden + u; };
      // One part of the row: `count` elements of W or R (gate < 0: zeros) padded to `pitch`, at column `at`.
      const auto put_part = [&](const TensorRef& t, int gate, std::size_t count, std::size_t pitch, std::size_t at) {
        for (std::size_t j0 = 0; j0 < pitch; j0 += piece.size()) {
          const std::size_t n = std::min(piece.size(), pitch - j0), given = j0 < count ? std::min(n, count - j0) : 0;
          std::fill(piece.data(), piece.data() + n, f16{});
          if (gate >= 0 && given > 0) {
            tiling::gather(core, buf, t.ptr, t.layout, gate_row(gate) * count + j0, given, piece.data());
          }
          core.put(a.matrices[d] + (4 * u + k) * gl.row_pitch() + at + j0, LdmSpan<const f16>(piece.first(n))).wait();
        }
      };
      put_part(a.w, src.w_gate, s.input, gl.x_pitch(), 0);
      put_part(a.r, src.r_gate, s.hidden, gl.h_pitch(), gl.x_pitch());
      bias[k] = 0.0f;
      const auto add_bias = [&](int gate, std::size_t half) {  // B is [dirs, Wb of every gate, Rb of every gate]
        if (gate < 0 || !a.b.present()) return;
        const std::size_t at = (d * 2 * gates + half * gates + static_cast<std::size_t>(gate)) * s.hidden + u;
        tiling::gather(core, buf, a.b.ptr, a.b.layout, at, 1, bias_halves.data());
        bias[k] += static_cast<float>(bias_halves[0]);
      };
      add_bias(src.wb_gate, 0);
      add_bias(src.rb_gate, 1);
    }
    core.compute(core.arch().compute.elementwise(DataType::kF32, 4, 2, 2, 1));
    core.put(a.biases[d] + 4 * u, LdmSpan<const float>(bias)).wait();
  }
}

}  // namespace

void stage_gate_matrices(Machine& machine, const CellShape& shape, const TensorRef& w, const TensorRef& r,
                         const TensorRef& b, const std::vector<DevicePtr<f16>>& matrices,
                         const std::vector<DevicePtr<float>>& biases, const std::string& label) {
  launch_all(machine, label, stage_kernel, StageArgs{shape, w, r, b, matrices, biases});
}

std::vector<StepTask> plan_tasks(const CellShape& shape, int core_groups, int groups_per_task) {
  const auto per_task = static_cast<std::size_t>(std::max(groups_per_task, 1));
  const std::size_t groups = static_cast<std::size_t>(std::max(core_groups, 1)) / per_task;  // task slots
  // Each direction takes groups / dirs slots (at least one), splitting its batch among them.
  if (per_task > 1 && groups < shape.dirs) {
    throw std::logic_error("plan_tasks: groups per task leave a direction without its own groups");
  }
  const std::size_t slices = std::clamp<std::size_t>(groups / shape.dirs, 1, shape.batch);
  std::vector<StepTask> tasks;
  for (std::size_t d = 0; d < shape.dirs; ++d) {
    for (std::size_t i = 0; i < slices; ++i) {
      StepTask t;
      t.dir = d;
      t.b0 = shape.batch * i / slices;
      t.b1 = shape.batch * (i + 1) / slices;
      t.group = static_cast<int>((tasks.size() % std::max<std::size_t>(groups, 1)) * per_task);
      t.groups = static_cast<int>(per_task);
      tasks.push_back(t);
    }
  }
  return tasks;
}

void allocate_scratch(Machine& machine, DeviceScratch& scratch, const CellShape& shape, const RecurrentMapping& m,
                      std::vector<StepTask>& tasks, const std::string& label) {
  const std::size_t rows = 4 * m.units_per_core, h_pitch = shape.gate_layout().h_pitch();
  // Cores publish columns [0, hidden) of an exchange row; the products read whole column blocks, so the pad columns
  // [hidden, h_pitch) are read against zero weights and must hold zeros (not whatever the memory held).
  const std::vector<float> pad(h_pitch - std::min(h_pitch, shape.hidden), 0.0f);
  const auto exchange = [&](std::size_t bs, const AllocOptions& where) {
    const DevicePtr<float> h = scratch.alloc<float>(bs * h_pitch, where);
    for (std::size_t b = 0; b < bs && !pad.empty(); ++b) machine.upload(h + b * h_pitch + shape.hidden, pad);
    return h;
  };
  for (StepTask& t : tasks) {
    const std::size_t bs = t.b1 - t.b0;
    const AllocOptions where{.cg = t.group, .name = label + ":recurrent scratch"};
    for (auto& h : t.h_exchange) h = exchange(bs, where);
    if (shape.two_pass()) {
      for (auto& rh : t.rh_exchange) rh = exchange(bs, where);
    }
    const auto groups = static_cast<std::size_t>(t.groups);
    if (m.ep > 1) t.partials = scratch.alloc<float>(groups * m.ep * m.cores_per_part * rows * bs, where);
  }
}

std::size_t widest_slice(const std::vector<StepTask>& tasks) {
  std::size_t widest = 1;
  for (const StepTask& t : tasks) widest = std::max(widest, t.b1 - t.b0);
  return widest;
}

}  // namespace ldmsim::ops::recurrent
