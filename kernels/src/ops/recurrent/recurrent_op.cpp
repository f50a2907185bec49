// The lstm and gru operators (ONNX semantics, layout 0): inputs X [seq, batch, input], W, R, then optionally B,
// initial_h and (LSTM) initial_c; outputs Y [seq, dirs, batch, hidden], Y_h and (LSTM) Y_c. Every tensor is
// viewed as a matrix split before its last axis, rows padded to an even length, so each row and each even
// column range is 4-byte legal. run() stages W(n), picks the EP/VP mapping and runs the step kernel.
#include <fmt/format.h>

#include "../op_support.hpp"
#include "../ops.hpp"
#include "mapping.hpp"
#include "reference.hpp"

namespace ldmsim::ops {

namespace {

using recurrent::CellShape;
using recurrent::TensorRef;

class RecurrentOp final : public BoundOp {
 public:
  RecurrentOp(std::span<const Shape> in, std::vector<Shape> out, CellShape shape, std::size_t forced_ep,
              std::size_t forced_groups)
      : BoundOp({in.begin(), in.end()}, std::move(out)),
        shape_(shape),
        forced_ep_(forced_ep),
        forced_groups_(forced_groups) {}

  Shape4 view(std::size_t index) const override {
    const Shape& s = tensor_shape(index);
    return Shape4::matrix_view(s, s.rank() - 1);
  }
  InputRole input_role(std::size_t i) const override {  // X; W, R, B; initial_h, initial_c
    return i == 0 ? InputRole::kData : i <= 3 ? InputRole::kParameter : InputRole::kState;
  }
  PaddingSpec padding(std::size_t) const override {
    return PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample, true};
  }

  void check_arch(const Arch& arch) const override {
    recurrent::check_forced_mapping(arch, shape_, forced_ep_, forced_groups_);
  }

  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const auto ref = [](const DeviceTensor& t) { return TensorRef{t.ptr, t.layout()}; };
    const auto optional = [&](std::size_t i) { return in.size() > i ? ref(in[i]) : TensorRef{}; };
    recurrent::StepArgs args;
    args.shape = shape_;
    args.x = ref(in[0]);
    args.h0 = optional(4);
    args.c0 = optional(5);
    args.y = ref(out[0]);
    args.y_h = ref(out[1]);
    if (out.size() > 2) args.y_c = ref(out[2]);
    choice_ = recurrent::choose_mapping(m, shape_, forced_ep_, forced_groups_);
    args.mapping = choice_.mapping();
    args.tasks =
        recurrent::plan_tasks(shape_, static_cast<int>(m.arch().core_groups), static_cast<int>(args.mapping.groups));

    // W(n) and its bias per direction, in the memory of the direction's first group.
    DeviceScratch scratch(m);  // freed whether the kernels finish or fault
    std::vector<DevicePtr<f16>> matrices;
    std::vector<DevicePtr<float>> biases;
    const GateMatrixLayout gl = shape_.gate_layout();
    for (std::size_t d = 0; d < shape_.dirs; ++d) {
      int group = 0;
      for (const auto& t : args.tasks) {
        if (t.dir == d) {
          group = t.group;
          break;
        }
      }
      const AllocOptions where{.cg = group, .name = label + ":W(n)"};
      matrices.push_back(scratch.alloc<f16>(gl.elements(), where));
      biases.push_back(scratch.alloc<float>(gl.rows(), where));
    }
    recurrent::stage_gate_matrices(m, shape_, ref(in[1]), ref(in[2]), optional(3), matrices, biases, label + ":gates");
    args.gate_matrix.assign(matrices.begin(), matrices.end());
    args.gate_bias.assign(biases.begin(), biases.end());
    recurrent::allocate_scratch(m, scratch, shape_, args.mapping, args.tasks, label);
    recurrent::run_steps(m, args, label);
  }

  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    return recurrent::reference_cell(shape_, in);
  }
  OpCost cost() const override {
    const std::uint64_t rows = 4 * shape_.hidden, cols = shape_.input + shape_.hidden;
    const std::uint64_t steps = shape_.seq * shape_.dirs * shape_.batch;
    return {steps * (2 * rows * cols + 40 * shape_.hidden), 0};
  }
  // fp16 inputs and outputs, fp32 state: the sums' order differs from the reference's; errors do not grow
  // beyond an output's rounding because every output is a squashed value in (-1, 1).
  Tolerance tolerance() const override { return {2e-3, 2e-3}; }
  nlohmann::json run_metrics() const override {
    if (choice_.candidates.empty()) return nullptr;
    const RecurrentMapping& m = choice_.mapping();
    nlohmann::json candidates = nlohmann::json::array();
    for (const auto& c : choice_.candidates) {
      candidates.push_back({{"groups", c.mapping.groups},
                            {"ep", c.mapping.ep},
                            {"vp", c.mapping.vp},
                            {"cycles_per_step", c.cycles_per_step}});
    }
    return {{"groups", m.groups},
            {"ep", m.ep},
            {"vp", m.vp},
            {"npe", choice_.npe},
            {"weights", m.resident ? "resident" : "streamed"},
            {"gate_matrix_bytes", shape_.gate_layout().elements() * 2},
            {"candidates", std::move(candidates)},
            {"explain", choice_.describe()}};
  }

 private:
  CellShape shape_;
  std::size_t forced_ep_;
  std::size_t forced_groups_;
  mutable MappingChoice choice_;  // the last run's search, for run_metrics
};

std::string dims_text(const Shape& s) {
  return s.str();
}

template <CellKind kKind>
std::unique_ptr<BoundOp> bind_cell(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"hidden_size", "direction", "linear_before_reset", "ep", "groups"});
  const std::size_t gates = onnx_gates(kKind);
  const Shape& x = in[0];
  if (x.rank() != 3) reject(name, fmt::format("X must be [seq, batch, input], got {}", dims_text(x)));
  CellShape s;
  s.kind = kKind;
  s.seq = x[0];
  s.batch = x[1];
  s.input = x[2];
  std::string direction = "forward";
  if (const auto d = attrs.find("direction")) direction = d->string();
  if (direction == "bidirectional") {
    s.dirs = 2;
  } else if (direction == "reverse") {
    s.reverse_first = true;
  } else if (direction != "forward") {
    reject(name, fmt::format("direction '{}' (forward, reverse or bidirectional)", direction));
  }
  const Shape& w = in[1];
  if (w.rank() != 3 || w[0] != s.dirs || w[1] % gates != 0 || w[2] != s.input) {
    reject(name, fmt::format("W must be [{}, {}*hidden, {}], got {}", s.dirs, gates, s.input, dims_text(w)));
  }
  s.hidden = w[1] / gates;
  if (const auto h = attrs.find("hidden_size"); h && h->unsigned_integer(1) != s.hidden) {
    reject(name, fmt::format("hidden_size {} does not match W's {}", h->unsigned_integer(1), s.hidden));
  }
  if (kKind == CellKind::kGru) s.linear_before_reset = int_attr(attrs, "linear_before_reset", 0, 0, 1) != 0;
  if (kKind == CellKind::kLstm && attrs.has("linear_before_reset")) reject(name, "linear_before_reset is GRU's");
  const auto expect = [&](std::size_t i, const Shape& want, const char* role) {
    if (in.size() > i && !(in[i] == want)) {
      reject(name, fmt::format("{} must be {}, got {}", role, dims_text(want), dims_text(in[i])));
    }
  };
  expect(2, Shape{s.dirs, gates * s.hidden, s.hidden}, "R");
  expect(3, Shape{s.dirs, 2 * gates * s.hidden}, "B");
  expect(4, Shape{s.dirs, s.batch, s.hidden}, "initial_h");
  expect(5, Shape{s.dirs, s.batch, s.hidden}, "initial_c");
  // A bound on W(n) (its fp16 bytes) so that staging never allocates beyond any simulated memory.
  checked_mul(checked_mul(4 * s.hidden, s.gate_layout().row_pitch(), "lstm/gru: W(n)"), 2 * s.dirs, "W(n)");
  const auto ep = static_cast<std::size_t>(int_attr(attrs, "ep", 0, 0, 1 << 20));
  const auto groups = static_cast<std::size_t>(int_attr(attrs, "groups", 0, 0, 1 << 10));
  std::vector<Shape> out{Shape{s.seq, s.dirs, s.batch, s.hidden}, Shape{s.dirs, s.batch, s.hidden}};
  if (kKind == CellKind::kLstm) out.push_back(out[1]);
  return std::make_unique<RecurrentOp>(in, std::move(out), s, ep, groups);
}

}  // namespace

void add_recurrent_kinds(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("lstm", Arity{3, 6, 3}, bind_cell<CellKind::kLstm>));
  registry.add(std::make_unique<FunctionKind>("gru", Arity{3, 5, 2}, bind_cell<CellKind::kGru>));
}

}  // namespace ldmsim::ops
