// The operator registry: kinds by name, binding with arity checks, and the built-in set.
#include <fmt/format.h>

#include <algorithm>

#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ops/ops.hpp"

namespace ldmsim {

const Shape& BoundOp::tensor_shape(std::size_t index) const {
  return index < inputs_.size() ? inputs_[index] : outputs_.at(index - inputs_.size());
}

PaddingPlan tensor_plan(const BoundOp& op, std::size_t index, StagingPolicy policy) {
  const DType type = op.dtype(index);
  if (type != DType::kF16) return typed_plan(op.tensor_shape(index), type, {});
  return choose_plan(op.view(index), op.padding(index), policy);
}

OperatorRegistry OperatorRegistry::builtin() {
  OperatorRegistry registry;
  ops::add_elementwise_kinds(registry);
  ops::add_softmax_kind(registry);
  ops::add_pool_kinds(registry);
  ops::add_spatialbn_kinds(registry);
  ops::add_layout_kinds(registry);
  ops::add_global_pool_kind(registry);
  ops::add_matmul_kinds(registry);
  ops::add_conv_kind(registry);
  ops::add_reduce_kinds(registry);
  ops::add_arg_reduce_kinds(registry);
  ops::add_cumsum_kind(registry);
  ops::add_top_k_kind(registry);
  ops::add_layer_norm_kind(registry);
  ops::add_transpose_kind(registry);
  ops::add_slice_kind(registry);
  ops::add_expand_kind(registry);
  ops::add_gather_kind(registry);
  ops::add_typed_elementwise_kinds(registry);
  ops::add_pad_kind(registry);
  ops::add_recurrent_kinds(registry);
  return registry;
}

OperatorRegistry::OperatorRegistry() : kinds_(std::make_shared<const Kinds>()) {}

void OperatorRegistry::add(std::unique_ptr<OperatorKind> kind) {
  std::string name(kind->name());
  auto kinds = std::make_shared<Kinds>(*kinds_);  // copies made before keep the table they were made with
  kinds->insert_or_assign(std::move(name), std::shared_ptr<const OperatorKind>(std::move(kind)));
  kinds_ = std::move(kinds);
}

const OperatorKind* OperatorRegistry::find(std::string_view name) const {
  const auto it = kinds_->find(name);
  return it == kinds_->end() ? nullptr : it->second.get();
}

const OperatorKind* OperatorRegistry::find_onnx(std::string_view onnx_type) const {
  for (const auto& [name, kind] : *kinds_) {
    const auto& types = kind->traits().onnx_types;
    if (std::find(types.begin(), types.end(), onnx_type) != types.end()) return kind.get();
  }
  return nullptr;
}

std::vector<std::string> OperatorRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, kind] : *kinds_) out.push_back(name);
  return out;
}

std::unique_ptr<BoundOp> OperatorKind::bind_typed(const JsonField& attrs, std::span<const Shape> inputs,
                                                  std::span<const DType> types) const {
  std::unique_ptr<BoundOp> op = bind(attrs, inputs);
  const auto other = std::find_if(types.begin(), types.end(), [](DType t) { return t != DType::kF16; });
  if (other == types.end()) return op;
  const auto k = static_cast<std::size_t>(other - types.begin());
  const bool one_type = std::all_of(types.begin(), types.end(), [&](DType t) { return t == *other; });
  if (one_type) {
    if (auto typed = op->with_element_type(*other)) return typed;
  }
  throw ConfigError(fmt::format("input {} is {}, but {} computes on f16 tensors{}", k, to_string(*other), name(),
                                one_type ? "" : " (and its inputs differ in element type)"));
}

std::unique_ptr<BoundOp> OperatorRegistry::bind(std::string_view name, const JsonField& attrs,
                                                std::span<const Shape> inputs) const {
  const std::vector<DType> types(inputs.size(), DType::kF16);
  return bind(name, attrs, inputs, types);
}

std::unique_ptr<BoundOp> OperatorRegistry::bind(std::string_view name, const JsonField& attrs,
                                                std::span<const Shape> inputs, std::span<const DType> types) const {
  const OperatorKind* kind = find(name);
  if (kind == nullptr) {
    const std::vector<std::string> known = names();
    const auto suggestion = closest_match(name, known);
    throw ConfigError(fmt::format("unknown op '{}'{} (known: {})", name,
                                  suggestion ? fmt::format(", did you mean '{}'?", *suggestion) : std::string(),
                                  fmt::join(known, ", ")));
  }
  const Arity a = kind->arity();
  if (inputs.size() < a.min_inputs || inputs.size() > a.max_inputs) {
    throw ConfigError(
        a.min_inputs == a.max_inputs
            ? fmt::format("takes {} input{}, got {}", a.min_inputs, a.min_inputs == 1 ? "" : "s", inputs.size())
            : fmt::format("takes {} to {} inputs, got {}", a.min_inputs, a.max_inputs, inputs.size()));
  }
  return kind->bind_typed(attrs, inputs, types);
}

std::vector<Shape> typical_inputs(std::string_view op, const Shape& x) {
  const Shape4 v = Shape4::view_of(x);
  if (op == "add" || op == "mul") return {x, x};
  if (op == "fc") return {x, Shape{1000, v.chw()}, Shape{1000}};
  if (op == "spatialbn") return {x, Shape{v.c}, Shape{v.c}, Shape{v.c}, Shape{v.c}};
  if (op == "spatialbn_train") return {x, Shape{v.c}, Shape{v.c}};
  return {x};
}

}  // namespace ldmsim
