// A test's own operator kind: another (built-in) kind's bound ops under a user's name, with that kind's traits, for
// tests that a user's registry reaches every path a built-in kind does.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/kernels/operator.hpp"

namespace ldmsim::test {

/// A bound op that is another kind's bound op under a user's name: every property is the wrapped op's (a test may
/// derive from it to watch one).
class WrappedOp : public BoundOp {
 public:
  explicit WrappedOp(std::unique_ptr<BoundOp> inner)
      : BoundOp(inner->input_shapes(), inner->output_shapes()), inner_(std::move(inner)) {}
  Shape4 view(std::size_t index) const override { return inner_->view(index); }
  PaddingSpec padding(std::size_t index) const override { return inner_->padding(index); }
  void run(Machine& machine, std::span<const DeviceTensor> inputs, std::span<const DeviceTensor> outputs,
           const std::string& label) const override {
    inner_->run(machine, inputs, outputs, label);
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> inputs) const override {
    return inner_->reference(inputs);
  }
  OpCost cost() const override { return inner_->cost(); }
  Tolerance tolerance() const override { return inner_->tolerance(); }
  bool runs_in_producer_layout() const override { return inner_->runs_in_producer_layout(); }
  InputRole input_role(std::size_t index) const override { return inner_->input_role(index); }
  FusionForm fusion_form() const override { return inner_->fusion_form(); }
  bool folds_activation() const override { return inner_->folds_activation(); }
  bool folds_residual() const override { return inner_->folds_residual(); }
  SplitGeometry split_geometry() const override { return inner_->split_geometry(); }
  std::optional<double> kernel_estimate(const Arch& arch, KernelEstimates& memo) const override {
    return inner_->kernel_estimate(arch, memo);
  }

 private:
  std::unique_ptr<BoundOp> inner_;
};

/// A kind named `name` that binds the built-in kind `as`, with its traits (split rule, fold role), and the ONNX op
/// types `onnx` (none unless given: `as` keeps its own). `wrap` makes the bound op from `as`'s (a WrappedOp unless
/// given).
class WrappingKind final : public OperatorKind {
 public:
  using Wrap = std::function<std::unique_ptr<BoundOp>(std::unique_ptr<BoundOp>)>;
  WrappingKind(std::string name, std::string as, std::vector<std::string> onnx = {}, Wrap wrap = {})
      : OperatorKind(traits_of(as, std::move(onnx))),
        name_(std::move(name)),
        as_(std::move(as)),
        wrap_(std::move(wrap)) {}
  std::string_view name() const override { return name_; }
  Arity arity() const override { return builtin_.find(as_)->arity(); }
  std::unique_ptr<BoundOp> bind(const JsonField& attrs, std::span<const Shape> inputs) const override {
    std::unique_ptr<BoundOp> inner = builtin_.bind(as_, attrs, inputs);
    return wrap_ ? wrap_(std::move(inner)) : std::make_unique<WrappedOp>(std::move(inner));
  }

 private:
  static OperatorTraits traits_of(const std::string& as, std::vector<std::string> onnx) {
    OperatorTraits traits = OperatorRegistry::builtin().find(as)->traits();
    traits.onnx_types = std::move(onnx);
    return traits;
  }
  std::string name_, as_;
  Wrap wrap_;
  OperatorRegistry builtin_ = OperatorRegistry::builtin();
};

}  // namespace ldmsim::test
