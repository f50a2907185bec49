// The bound op of a fused group: every external tensor is seen as [its rows, its row's elements], 1-D padded
// (outputs of a team mapping with odd rows get a padding column so that every row starts on a 4-byte word).
#include <fmt/format.h>

#include "../ops/op_support.hpp"
#include "fused_kernel_impl.hpp"

namespace ldmsim {

namespace {

class FusedOp final : public BoundOp {
 public:
  FusedOp(FusedProgram program, FusedMapping mapping, std::vector<Shape> in, std::vector<Shape> out,
          std::function<std::vector<HostTensor>(std::span<const HostTensor>)> reference, Tolerance tolerance,
          std::uint64_t flops, std::string arch, StagingPolicy policy)
      : BoundOp(std::move(in), std::move(out)),
        program_(std::move(program)),
        mapping_(std::move(mapping)),
        slots_(fusion::plan_slots(program_, mapping_.resident)),
        reference_(std::move(reference)),
        tolerance_(tolerance),
        flops_(flops),
        arch_(std::move(arch)),
        policy_(policy) {}

  Shape4 view(std::size_t index) const override {
    const FusedValue& v = value_of(index);
    return Shape4::from_dims({v.rows(program_.frame), v.row_elements(program_.frame)});
  }
  PaddingSpec padding(std::size_t index) const override {
    const bool output = index >= input_shapes().size();
    if (output && mapping_.team > 1 && value_of(index).row_elements(program_.frame) % 2 == 1) {
      return PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample, true};
    }
    return PaddingSpec{PaddingClass::kOneD};
  }

  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const Arch& arch = m.arch();
    if (arch.name != arch_) {
      ops::reject(label, fmt::format("the fused kernel was mapped for arch {}, not {}: fuse the graph for the arch "
                                     "it runs on",
                                     arch_, arch.name));
    }
    fusion::KernelArgs a{&program_, &mapping_, &slots_, {}, {}, {}, {}, {}, fusion::row_indexes(program_)};
    for (const DeviceTensor& t : in) {
      a.in.emplace_back(t.ptr);
      a.in_layout.push_back(t.layout());
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (mapping_.team > 1 && out[k].layout().chw_pitch % 2 == 1) {
        ops::reject(label, fmt::format("output '{}' has odd rows ({}) but a team mapping needs each row to start on a "
                                       "4-byte word: stage it with padding",
                                       out[k].name, out[k].plan.describe()));
      }
      a.out.push_back(out[k].ptr);
      a.out_layout.push_back(out[k].layout());
    }
    if (mapping_.team > 1) {
      const std::uint64_t floats = static_cast<std::uint64_t>(arch.cores_per_group()) / mapping_.team * 2 *
                                   program_.steps.size() * mapping_.team * program_.frame.i();
      for (std::uint32_t g = 0; g < arch.core_groups; ++g) {
        a.scratch.push_back(m.alloc<float>(floats, {.cg = static_cast<int>(g), .name = label + ":partials"}));
      }
    }
    try {
      ops::launch_all(m, label, fusion::fused_kernel, a);
    } catch (...) {
      for (auto p : a.scratch) m.free(p);
      throw;
    }
    for (auto p : a.scratch) m.free(p);
  }

  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override { return reference_(in); }
  OpCost cost() const override { return {flops_, mapping_.ldm_bytes}; }
  Tolerance tolerance() const override { return tolerance_; }

  const FusedProgram& program() const { return program_; }
  const FusedMapping& mapping() const { return mapping_; }
  StagingPolicy policy() const { return policy_; }

 private:
  const FusedValue& value_of(std::size_t index) const {
    const std::size_t n = input_shapes().size();
    return program_.values[index < n ? program_.inputs[index] : program_.outputs[index - n]];
  }

  FusedProgram program_;
  FusedMapping mapping_;
  fusion::SlotPlan slots_;
  std::function<std::vector<HostTensor>(std::span<const HostTensor>)> reference_;
  Tolerance tolerance_;
  std::uint64_t flops_;
  std::string arch_;
  StagingPolicy policy_;
};

}  // namespace

std::shared_ptr<const BoundOp> make_fused_op(
    FusedProgram program, FusedMapping mapping, std::vector<Shape> inputs, std::vector<Shape> outputs,
    std::function<std::vector<HostTensor>(std::span<const HostTensor>)> reference, Tolerance tolerance,
    std::uint64_t flops, std::string arch, StagingPolicy policy) {
  return std::make_shared<FusedOp>(std::move(program), std::move(mapping), std::move(inputs), std::move(outputs),
                                   std::move(reference), tolerance, flops, std::move(arch), policy);
}

const FusedProgram* fused_program(const BoundOp& op) {
  const auto* fused = dynamic_cast<const FusedOp*>(&op);
  return fused == nullptr ? nullptr : &fused->program();
}

std::shared_ptr<const BoundOp> fused_rows(const BoundOp& op, std::size_t axis, std::uint64_t begin, std::uint64_t end,
                                          const Arch& arch) {
  const auto& fused = dynamic_cast<const FusedOp&>(op);
  const FusedProgram& whole = fused.program();
  if (axis >= whole.frame.k_begin || begin >= end || end > whole.frame.shape[axis]) {
    throw ConfigError(fmt::format("fused_rows: rows [{}, {}) of frame axis {} are not rows of {}", begin, end, axis,
                                  whole.frame.str()));
  }
  const std::uint64_t extent = whole.frame.shape[axis];
  FusedProgram piece = whole;
  std::vector<std::uint64_t> dims(whole.frame.shape.dims().begin(), whole.frame.shape.dims().end());
  dims[axis] = end - begin;
  piece.frame.shape = Shape(dims, "a fused piece's frame");
  for (FusedValue& v : piece.values) {
    if (v.dims[axis] == extent) v.dims[axis] = end - begin;
  }
  const auto cut = [&](const Shape& shape, std::size_t value) {
    const auto at = fused_tensor_axis(whole, shape, value, axis);
    if (!at) return shape;
    std::vector<std::uint64_t> d(shape.dims().begin(), shape.dims().end());
    d[*at] = end - begin;
    return Shape(d, "a fused piece's tensor");
  };
  std::vector<Shape> in, out;
  for (std::size_t k = 0; k < whole.inputs.size(); ++k) in.push_back(cut(op.input_shapes()[k], whole.inputs[k]));
  for (std::size_t k = 0; k < whole.outputs.size(); ++k) out.push_back(cut(op.output_shapes()[k], whole.outputs[k]));
  // The whole op's team size: every row's reductions then add their partial sums in the same order.
  std::optional<FusedMapping> mapping = choose_fused_mapping(piece, arch, fused.policy(), 0, fused.mapping().team);
  if (!mapping) return nullptr;
  auto reference = [piece, out](std::span<const HostTensor> given) { return evaluate_program(piece, given, out); };
  const std::uint64_t flops = fused.cost().flops * (end - begin) / std::max<std::uint64_t>(1, extent);
  return std::make_shared<FusedOp>(piece, *mapping, std::move(in), std::move(out), std::move(reference),
                                   fused.tolerance(), flops, arch.name, fused.policy());
}

}  // namespace ldmsim
