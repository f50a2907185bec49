// The operator framework. An OperatorKind (relu, fc, max_pool, ...) parses a node's attributes once into a typed
// struct and checks its input shapes, yielding a BoundOp: one operator instance whose output shapes, padding
// classes, device run, fp32 reference and cost are methods. Kinds live in an explicit OperatorRegistry that is
// passed to whoever needs it (no mutable global).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/kernels/constant_pack.hpp"
#include "ldmsim/kernels/dtype.hpp"
#include "ldmsim/kernels/fusion_form.hpp"
#include "ldmsim/kernels/kernel_estimates.hpp"
#include "ldmsim/kernels/operator_traits.hpp"
#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/kernels/shape.hpp"
#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/json_checked.hpp"

namespace ldmsim {

/// A host tensor in fp32 (references and tests), C order.
struct HostTensor {
  Shape shape;
  std::vector<float> data;
};

/// Work of one operator invocation, for stats and reports.
struct OpCost {
  std::uint64_t flops = 0;
  std::uint64_t ldm_bytes_per_core = 0;
};

/// Max |device - reference| allowed, as abs + rel * |reference|.
struct Tolerance {
  double abs = 1e-3;
  double rel = 1e-3;
};

/// How many tensors an operator takes and produces.
struct Arity {
  std::size_t min_inputs = 1;
  std::size_t max_inputs = 1;
  std::size_t outputs = 1;
};

/// What an input is to its op: data flowing through the network, a parameter of the op (weights, biases,
/// normalisation statistics) or a recurrent layer's initial state.
enum class InputRole : std::uint8_t { kData, kParameter, kState };

/// One operator instance: attributes parsed and input shapes checked.
class BoundOp {
 public:
  virtual ~BoundOp() = default;
  const std::vector<Shape>& input_shapes() const { return inputs_; }
  const std::vector<Shape>& output_shapes() const { return outputs_; }
  /// The shape of tensor `index` (inputs first, then outputs).
  const Shape& tensor_shape(std::size_t index) const;
  /// The element type of tensor `index` (inputs first, then outputs): fp16 unless the op was bound for others.
  DType dtype(std::size_t index) const { return index < dtypes_.size() ? dtypes_[index] : DType::kF16; }
  /// The 4-D NCHW view the kernel uses for tensor `index`, in 2-byte units (default: unit_view of its shape).
  virtual Shape4 view(std::size_t index) const { return unit_view(tensor_shape(index), dtype(index)); }
  /// Padding class of tensor `index`.
  virtual PaddingSpec padding(std::size_t index) const = 0;
  /// Launches the device kernel(s) under `label` and joins (faults propagate). Tensors are in planned layouts.
  virtual void run(Machine& machine, std::span<const DeviceTensor> inputs, std::span<const DeviceTensor> outputs,
                   const std::string& label) const = 0;
  /// fp32 reference on the logical data (an independent implementation, not the kernel's code).
  virtual std::vector<HostTensor> reference(std::span<const HostTensor> inputs) const = 0;
  virtual OpCost cost() const = 0;
  virtual Tolerance tolerance() const { return {}; }
  /// True when the output holds input 0's elements in the same C order (reshape, flatten): when input 0 dies at
  /// this op and both layouts place elements alike, the executor hands its buffer over instead of running.
  virtual bool reinterprets_input() const { return false; }
  /// True when the kernel runs on any layout with an even total that its output shares with every input of the
  /// output's shape (element-wise ops: element i of each such buffer goes with element i of the output). The
  /// layout pass then lets the op adopt the layout its input arrives in instead of re-laying it out.
  virtual bool runs_in_producer_layout() const { return false; }
  /// True when the kernel reads input `input` through its Layout by logical index, whatever its pitches (an even
  /// total): the layout pass then hands it the copy as it lies (the layout its producer wrote) instead of a
  /// re-laid-out one.
  virtual bool reads_any_layout(std::size_t input) const {
    (void)input;
    return false;
  }
  /// Measurements of the last run() that the machine's statistics do not show (conv: its algorithm, extra
  /// main-memory bytes, integer address operations); JSON null when there are none. Reported per op in stats.json.
  virtual nlohmann::json run_metrics() const { return nullptr; }
  /// The simulated cycles the op's kernel expects on `arch` with every operand in its own core group's memory, as its
  /// kernel plans itself (the matrix engine's blocking search); nullopt for a kernel without such an estimate.
  /// `memo` keeps the searches for the next ask.
  virtual std::optional<double> kernel_estimate(const Arch& /*arch*/, KernelEstimates& /*memo*/) const {
    return std::nullopt;
  }
  /// ConfigError when the op cannot run on a machine of `arch` (what run() would refuse there, e.g. more core groups
  /// than the arch has), checked before anything runs by `ldmsim run` and `ldmsim plan` alike.
  virtual void check_arch(const Arch& /*arch*/) const {}
  /// The role of input `index` (tensor tags: a weight or a neuron); data unless the op says otherwise.
  virtual InputRole input_role(std::size_t) const { return InputRole::kData; }
  /// How the op joins a fused kernel of memory-intensive ops; kind kNone (the default) keeps it out of fusion.
  virtual FusionForm fusion_form() const { return {}; }
  /// True when the op takes attribute "activation" (relu or clip applied to its output as it is stored) and has
  /// none yet: the fusion pass then folds a relu or clip that alone reads its output into it.
  virtual bool folds_activation() const { return false; }
  /// True when the op takes attribute "residual" (a last input of its output's shape added to its output as it is
  /// stored) and has neither a residual nor an activation yet: the fusion pass then folds an add that alone reads
  /// its output into it.
  virtual bool folds_residual() const { return false; }
  /// True when the op takes attribute "bias" (a last input, a vector over its output's last axis, added to its output
  /// as it is stored) and has neither a bias nor an activation yet: the fusion pass then folds an add of such a
  /// vector that alone reads its output into it.
  virtual bool folds_bias() const { return false; }
  /// Constant packing (docs/splitting.md): the slices of its inputs each worker of a machine of `arch` reads,
  /// when the op's kernel can take them from one pack per core; `constant[i]`: input i's values are fixed before
  /// the run. Tensors in the layouts run() will get. nullopt (the default): the op reads its inputs itself.
  virtual std::optional<packing::PackPlan> pack_plan(const Arch& /*arch*/, std::span<const DeviceTensor> /*inputs*/,
                                                     std::span<const DeviceTensor> /*outputs*/,
                                                     const std::vector<bool>& /*constant*/) const {
    return std::nullopt;
  }
  /// The attributes the split rule reads (a conv's or pool's window, gemm's transposes, concat's axis).
  virtual SplitGeometry split_geometry() const { return {}; }
  /// The same op on tensors of element type `type` (inputs and outputs alike), when the op only moves elements
  /// (reshape, slice, expand, transpose); nullptr (the default) when it computes on fp16 values.
  virtual std::unique_ptr<BoundOp> with_element_type(DType /*type*/) const { return nullptr; }
  /// run() with the packs of pack_plan staged (each worker's at packs.addr[worker]).
  virtual void run_packed(Machine& machine, std::span<const DeviceTensor> inputs, std::span<const DeviceTensor> outputs,
                          const std::string& label, const packing::StagedPacks& /*packs*/) const {
    run(machine, inputs, outputs, label);
  }

 protected:
  BoundOp(std::vector<Shape> inputs, std::vector<Shape> outputs)
      : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  /// Element types of the inputs, then the outputs (an op of typed tensors sets them when it is bound).
  void set_dtypes(std::vector<DType> types) { dtypes_ = std::move(types); }

 private:
  std::vector<Shape> inputs_;
  std::vector<Shape> outputs_;
  std::vector<DType> dtypes_;
};

/// An operator kind: its name, arity and how to bind it.
class OperatorKind {
 public:
  virtual ~OperatorKind() = default;
  virtual std::string_view name() const = 0;
  virtual Arity arity() const { return {}; }
  /// Parses `attrs` (null or an object; errors name the JSON path) and checks `inputs`; ConfigError otherwise.
  virtual std::unique_ptr<BoundOp> bind(const JsonField& attrs, std::span<const Shape> inputs) const = 0;
  /// bind() for inputs of element types `types`. The default takes fp16 inputs, or inputs of one other type when
  /// the bound op only moves elements (BoundOp::with_element_type); ConfigError naming the input otherwise. Kinds
  /// of typed tensors (gather, where, comparisons, cast) override it.
  virtual std::unique_ptr<BoundOp> bind_typed(const JsonField& attrs, std::span<const Shape> inputs,
                                              std::span<const DType> types) const;
  /// How the split rule cuts it, its part in store folds, its ONNX op types (operator_traits.hpp).
  const OperatorTraits& traits() const { return traits_; }

 protected:
  OperatorKind() = default;
  explicit OperatorKind(OperatorTraits traits) : traits_(std::move(traits)) {}

 private:
  OperatorTraits traits_;
};

/// Operator kinds by name. Copies share their kinds (a copy is cheap; adding to one copies its table first), so a
/// graph can keep the registry it was built with.
class OperatorRegistry {
 public:
  OperatorRegistry();
  /// A registry holding every built-in operator (kernels/src/ops/).
  static OperatorRegistry builtin();
  /// Adds or replaces a kind.
  void add(std::unique_ptr<OperatorKind> kind);
  /// The kind, or nullptr.
  const OperatorKind* find(std::string_view name) const;
  std::vector<std::string> names() const;
  /// The kind an ONNX op type maps onto one to one (OperatorTraits::onnx_types), or nullptr.
  const OperatorKind* find_onnx(std::string_view onnx_type) const;
  /// Binds a kind by name: checks arity, then the kind's own attributes and shapes. `attrs` may be JSON null.
  std::unique_ptr<BoundOp> bind(std::string_view name, const JsonField& attrs, std::span<const Shape> inputs) const;
  /// bind() for inputs of element types `types` (OperatorKind::bind_typed).
  std::unique_ptr<BoundOp> bind(std::string_view name, const JsonField& attrs, std::span<const Shape> inputs,
                                std::span<const DType> types) const;
  /// True when both hold the very same kinds (one is an unchanged copy of the other).
  bool same_kinds(const OperatorRegistry& other) const { return kinds_ == other.kinds_; }

 private:
  using Kinds = std::map<std::string, std::shared_ptr<const OperatorKind>, std::less<>>;
  std::shared_ptr<const Kinds> kinds_;
};

/// The layout `op` wants for its tensor `index` under `policy`: the padding method's choice for an fp16 tensor, the
/// natural layout for a 32-bit one (typed_plan).
PaddingPlan tensor_plan(const BoundOp& op, std::size_t index, StagingPolicy policy);

/// The inputs an op typically has when its main input is `x` (fc: W [1000, c*h*w] and b [1000]; add/mul: a second
/// x; the spatialbn ops: per-channel vectors), for tools that show an op's padding for one shape.
std::vector<Shape> typical_inputs(std::string_view op, const Shape& x);

}  // namespace ldmsim
