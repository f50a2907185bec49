// Graph construction: every op is bound (attributes parsed, shapes inferred) as it is added.
#include "ldmsim/graph/graph.hpp"

#include <fmt/format.h>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

std::string OpNode::label() const {
  return fmt::format("{}#{}", type, index);
}

std::string OpNode::layer() const {
  return name.empty() ? label() : name;
}

const OperatorRegistry& Graph::registry() const {
  if (registry_) return *registry_;
  static const OperatorRegistry builtin = OperatorRegistry::builtin();  // immutable: shared by every such graph
  return builtin;
}

std::optional<std::size_t> Graph::find(std::string_view tensor) const {
  const auto it = by_name_.find(tensor);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::size_t Graph::add_input(std::string tensor_name, Shape shape, TensorInit init, DType dtype) {
  if (find(tensor_name)) throw ConfigError(fmt::format("tensor '{}' is defined twice", tensor_name));
  const std::size_t index = tensors_.size();
  by_name_.emplace(tensor_name, index);
  tensors_.push_back(TensorNode{std::move(tensor_name), shape, std::move(init), dtype, std::nullopt, {}, false});
  return index;
}

void Graph::declare_shape(const std::string& tensor, Shape shape) {
  declared_.insert_or_assign(tensor, shape);
}

std::size_t Graph::add_op(const OperatorRegistry& registry, const std::string& type,
                          const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                          const JsonField& attrs, std::string layer_name) {
  const std::size_t index = ops_.size();
  const std::string where = layer_name.empty() ? fmt::format("op {} ({})", index, type)
                                               : fmt::format("op {} '{}' ({})", index, layer_name, type);
  std::vector<std::size_t> in;
  std::vector<Shape> shapes;
  std::vector<DType> types;
  for (const auto& input : inputs) {
    const auto t = find(input);
    if (!t) {
      throw ConfigError(
          fmt::format("{}: missing tensor '{}' (not initialized and not produced by any op)", where, input));
    }
    in.push_back(*t);
    shapes.push_back(tensors_[*t].shape);
    types.push_back(tensors_[*t].dtype);
  }
  std::shared_ptr<const BoundOp> bound;
  // Defaults fill the keys the op does not set; the merged tree lives only as long as binding (kinds parse
  // their attributes into typed values there).
  nlohmann::json merged;
  const auto defaults = default_attrs_.find(type);
  if (defaults != default_attrs_.end() && (attrs.json().is_null() || attrs.json().is_object())) {
    merged = attrs.json().is_null() ? nlohmann::json::object() : attrs.json();
    for (const auto& [key, value] : defaults->second.items()) {
      if (!merged.contains(key)) merged[key] = value;
    }
  }
  try {
    bound = merged.is_null() ? registry.bind(type, attrs, shapes, types)
                             : registry.bind(type, JsonField(merged, attrs.origin(), attrs.path()), shapes, types);
  } catch (const ConfigError& e) {
    if (registry.find(type) == nullptr) throw ConfigError(fmt::format("op {}: {}", index, e.what()));
    throw ConfigError(fmt::format("{}: {}", where, e.what()));
  }
  const std::size_t added = add_checked(type, std::move(in), outputs, std::move(bound), std::move(layer_name), where);
  if (!registry_ || !registry_->same_kinds(registry)) registry_ = std::make_shared<const OperatorRegistry>(registry);
  ops_[added].attrs = !merged.is_null()        ? std::move(merged)
                      : attrs.json().is_null() ? nlohmann::json::object()
                                               : attrs.json();
  return added;
}

std::size_t Graph::add_bound_op(const std::string& type, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs, std::shared_ptr<const BoundOp> bound,
                                std::string layer_name, nlohmann::json attrs) {
  const std::string where = fmt::format("op {} ({})", ops_.size(), type);
  std::vector<std::size_t> in;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const auto t = find(inputs[k]);
    if (!t) throw ConfigError(fmt::format("{}: missing tensor '{}'", where, inputs[k]));
    if (k >= bound->input_shapes().size() || !(tensors_[*t].shape == bound->input_shapes()[k])) {
      throw ConfigError(fmt::format("{}: input '{}' is {}, the op expects {}", where, inputs[k],
                                    tensors_[*t].shape.str(),
                                    k < bound->input_shapes().size() ? bound->input_shapes()[k].str() : "nothing"));
    }
    if (tensors_[*t].dtype != bound->dtype(k)) {
      throw ConfigError(fmt::format("{}: input '{}' is {}, the op expects {}", where, inputs[k],
                                    to_string(tensors_[*t].dtype), to_string(bound->dtype(k))));
    }
    in.push_back(*t);
  }
  const std::size_t added = add_checked(type, std::move(in), outputs, std::move(bound), std::move(layer_name), where);
  ops_[added].attrs = std::move(attrs);
  return added;
}

std::size_t Graph::add_checked(const std::string& type, std::vector<std::size_t> in,
                               const std::vector<std::string>& outputs, std::shared_ptr<const BoundOp> bound,
                               std::string layer_name, const std::string& where) {
  const std::size_t index = ops_.size();
  if (bound->output_shapes().size() != outputs.size()) {
    throw ConfigError(
        fmt::format("{}: produces {} outputs, got {}", where, bound->output_shapes().size(), outputs.size()));
  }
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::string& output = outputs[k];
    if (const auto t = find(output)) {
      const TensorNode& existing = tensors_[*t];
      throw ConfigError(
          existing.producer
              ? fmt::format("{}: tensor '{}' is produced twice (also by op {})", where, output, *existing.producer)
              : fmt::format("{}: tensor '{}' is produced twice (it is also initialized)", where, output));
    }
    const Shape& shape = bound->output_shapes()[k];
    if (const auto d = declared_.find(output); d != declared_.end() && !(d->second == shape)) {
      throw ConfigError(fmt::format("{}: shape mismatch: '{}' is declared {} but the op produces {}", where, output,
                                    d->second.str(), shape.str()));
    }
    const std::size_t t = tensors_.size();
    by_name_.emplace(output, t);
    tensors_.push_back(TensorNode{output, shape, TensorInit{}, bound->dtype(in.size() + k), index, {}, false});
    out.push_back(t);
  }
  for (std::size_t t : in) tensors_[t].consumers.push_back(index);
  ops_.push_back(OpNode{type, std::move(in), std::move(out), std::move(bound), nullptr, index, std::move(layer_name)});
  return index;
}

void Graph::set_default_attrs(const std::string& type, nlohmann::json attrs) {
  default_attrs_.insert_or_assign(type, std::move(attrs));
}

void Graph::mark_output(const std::string& tensor) {
  const auto t = find(tensor);
  if (!t) throw ConfigError(fmt::format("outputs: missing tensor \"{}\"", tensor));
  if (!tensors_[*t].is_output) outputs_.push_back(*t);
  tensors_[*t].is_output = true;
}

void Graph::set_input_values(std::size_t tensor, SharedHalves values) {
  TensorNode& node = tensors_.at(tensor);
  if (!node.is_input()) throw ConfigError(fmt::format("tensor \"{}\" is not a graph input", node.name));
  const std::size_t units = units_of(node.dtype);
  if (values.size() != node.shape.elements() * units) {
    throw ConfigError(fmt::format("input \"{}\": {} values given for shape {} ({} elements)", node.name,
                                  values.size() / units, node.shape.str(), node.shape.elements()));
  }
  node.init.kind = TensorInit::Kind::kData;
  node.init.data = std::move(values);
  node.init.source_f32 = false;
}

}  // namespace ldmsim
