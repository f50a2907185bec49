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
          std::uint64_t flops, std::string arch)
      : BoundOp(std::move(in), std::move(out)),
        program_(std::move(program)),
        mapping_(std::move(mapping)),
        slots_(fusion::plan_slots(program_, mapping_.resident)),
        reference_(std::move(reference)),
        tolerance_(tolerance),
        flops_(flops),
        arch_(std::move(arch)) {}

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
    fusion::KernelArgs a{&program_, &mapping_, &slots_, {}, {}, {}, {}, {}};
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
};

}  // namespace

std::shared_ptr<const BoundOp> make_fused_op(
    FusedProgram program, FusedMapping mapping, std::vector<Shape> inputs, std::vector<Shape> outputs,
    std::function<std::vector<HostTensor>(std::span<const HostTensor>)> reference, Tolerance tolerance,
    std::uint64_t flops, std::string arch) {
  return std::make_shared<FusedOp>(std::move(program), std::move(mapping), std::move(inputs), std::move(outputs),
                                   std::move(reference), tolerance, flops, std::move(arch));
}

}  // namespace ldmsim
