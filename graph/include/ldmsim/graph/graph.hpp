// The graph layer's data model: named tensors of rank 0 to 6 and operator nodes with edges between them. A graph
// is built by a front end (the JSON workload loader, later ONNX): adding an op binds it through an
// OperatorRegistry, which parses its attributes once and infers its output shapes (numpy broadcasting included),
// so a graph that was built is valid by construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/kernels/dtype.hpp"
#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/kernels/shape.hpp"

namespace ldmsim {

/// Where a tensor's initial values come from (graph inputs); kProduced for tensors an op writes.
struct TensorInit {
  enum class Kind : std::uint8_t { kProduced, kUniform, kNormal, kValue, kData };
  Kind kind = Kind::kProduced;
  double a = 0;  ///< uniform: low; normal: mean; value: the value
  double b = 0;  ///< uniform: high; normal: standard deviation
  std::uint64_t seed = 0;
  /// kData: logical values in C order in 2-byte units (dtype.hpp): fp16 values rounded, or int32/bool words;
  /// shared, so copies of a graph (fusion, passes) do not copy a model's weights.
  SharedHalves data;
  bool source_f32 = false;  ///< the workload declared it f32 (rounded to fp16 when loaded)
  /// A constant of the model (an ONNX initializer) or a value given when it runs (an ONNX graph input); unset:
  /// decided by use (tensor tags: an input read only as an op's parameter is a constant).
  std::optional<bool> constant;
};

struct TensorNode {
  std::string name;
  Shape shape;
  TensorInit init;
  DType dtype = DType::kF16;
  std::optional<std::size_t> producer;  ///< op index
  std::vector<std::size_t> consumers;   ///< op indices in order (an op reading it twice appears twice)
  bool is_output = false;
  bool is_input() const { return init.kind != TensorInit::Kind::kProduced; }
  /// Bytes of its logical data.
  std::uint64_t logical_bytes() const { return shape.elements() * bytes_of(dtype); }
};

struct OpNode {
  std::string type;
  std::vector<std::size_t> inputs;   ///< tensor indices
  std::vector<std::size_t> outputs;  ///< tensor indices
  std::shared_ptr<const BoundOp> bound;
  /// The attributes it was bound with (defaults filled in; an object for an op added by add_op, null for one added
  /// already bound without them): the split executor binds pieces of the op from them, and the fusion pass folds
  /// an activation into an op only when they are an object.
  nlohmann::json attrs;
  std::size_t index = 0;
  std::string name;  ///< the layer's name in the model (an ONNX node's name; "name" in a workload), may be empty
  /// The kernel name in traces and stats: "type#index".
  std::string label() const;
  /// How a user knows the op: its name, else its label.
  std::string layer() const;
  /// The position of tensor `t` among the op's inputs (its first), or inputs.size() when it reads none.
  std::size_t input_index(std::size_t t) const {
    return static_cast<std::size_t>(std::find(inputs.begin(), inputs.end(), t) - inputs.begin());
  }
  /// The position of tensor `t` among the op's outputs, or outputs.size() when it writes none.
  std::size_t output_index(std::size_t t) const {
    return static_cast<std::size_t>(std::find(outputs.begin(), outputs.end(), t) - outputs.begin());
  }
};

class Graph {
 public:
  std::string name = "workload";
  std::optional<std::string> arch;       ///< the workload's preferred arch (name or file)
  std::optional<StagingPolicy> staging;  ///< the workload's preferred staging policy

  /// Adds an input tensor of element type `dtype` (ConfigError when the name exists).
  std::size_t add_input(std::string name, Shape shape, TensorInit init, DType dtype = DType::kF16);
  /// Declares the shape an op output must have (checked when the op is added).
  void declare_shape(const std::string& tensor, Shape shape);
  /// Binds `type` with `attrs` on the named inputs (which must exist) and adds its outputs; errors are
  /// ConfigErrors "op I (type): ..." naming the tensor or attribute. The graph keeps (a copy of) `registry` as its
  /// own unless it already holds the same kinds.
  std::size_t add_op(const OperatorRegistry& registry, const std::string& type, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const JsonField& attrs, std::string layer_name = {});
  /// Adds an op that is already bound (the fusion pass's fused ops): the inputs must exist with the shapes it
  /// was bound for.
  std::size_t add_bound_op(const std::string& type, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs, std::shared_ptr<const BoundOp> bound,
                           std::string layer_name = {}, nlohmann::json attrs = nullptr);
  /// Attributes that every later op of `type` gets unless it sets them itself (`ldmsim run --conv-algo`).
  void set_default_attrs(const std::string& type, nlohmann::json attrs);
  /// The registry the graph's ops were bound with, which binds what is derived from them (the split executor's
  /// pieces, the fusion pass's folds); the built-in kinds for a graph that was given none.
  const OperatorRegistry& registry() const;
  std::shared_ptr<const OperatorRegistry> shared_registry() const { return registry_; }
  /// Sets the registry (a graph derived from another keeps the original's).
  void set_registry(std::shared_ptr<const OperatorRegistry> registry) { registry_ = std::move(registry); }
  /// Marks a tensor as a graph output (ConfigError when it does not exist).
  void mark_output(const std::string& tensor);
  /// Gives graph input `tensor` these values (C order in 2-byte units, as many as its shape and dtype hold:
  /// ConfigError otherwise), in place of the ones it was declared with: a run with the caller's input values.
  void set_input_values(std::size_t tensor, SharedHalves values);

  const std::vector<TensorNode>& tensors() const { return tensors_; }
  const std::vector<OpNode>& ops() const { return ops_; }
  const TensorNode& tensor(std::size_t index) const { return tensors_.at(index); }
  /// The index of a tensor, or nullopt.
  std::optional<std::size_t> find(std::string_view tensor) const;
  /// Graph outputs in the order they were marked.
  const std::vector<std::size_t>& outputs() const { return outputs_; }

 private:
  std::size_t add_checked(const std::string& type, std::vector<std::size_t> in, const std::vector<std::string>& outputs,
                          std::shared_ptr<const BoundOp> bound, std::string layer_name, const std::string& where);
  std::shared_ptr<const OperatorRegistry> registry_;
  std::vector<TensorNode> tensors_;
  std::vector<OpNode> ops_;
  std::vector<std::size_t> outputs_;
  std::map<std::string, std::size_t, std::less<>> by_name_;
  std::map<std::string, Shape, std::less<>> declared_;
  std::map<std::string, nlohmann::json, std::less<>> default_attrs_;
};

}  // namespace ldmsim
