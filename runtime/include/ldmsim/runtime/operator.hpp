// Operators and their registry. An operator declares shape inference, the padding class of each tensor it
// touches, a device launch, an fp32 host reference, a cost and a tolerance. The registry is a function-local
// static; kernels/ fills it explicitly with register_builtin_operators (no static initializers).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/runtime/padding.hpp"
#include "ldmsim/runtime/staging.hpp"

namespace ldmsim {

/// A host tensor in fp32 (references and tests).
struct HostTensor {
  Shape4 shape;
  std::vector<float> data;
};

/// Work of one operator invocation, for docs and reports.
struct OpCost {
  std::uint64_t flops = 0;
  std::uint64_t ldm_bytes_per_core = 0;
};

/// One operator kind.
struct Operator {
  std::string name;
  std::size_t min_inputs = 1;
  std::size_t max_inputs = 1;
  std::size_t outputs = 1;
  /// Output shapes from input shapes and attributes; throws ConfigError for a bad shape or attribute.
  std::function<std::vector<Shape4>(const std::vector<Shape4>& inputs, const nlohmann::json& attrs)> infer;
  /// Padding class of tensor `index` (inputs first, then outputs).
  std::function<PaddingSpec(std::size_t index)> padding;
  /// Launches the device kernel on every core group and joins (faults propagate).
  std::function<void(Machine& machine, const std::vector<DeviceTensor>& inputs,
                     const std::vector<DeviceTensor>& outputs, const nlohmann::json& attrs, const std::string& name)>
      run;
  /// fp32 reference on the logical (unpadded) data.
  std::function<std::vector<HostTensor>(const std::vector<HostTensor>& inputs, const nlohmann::json& attrs)> reference;
  /// Cost of the invocation.
  std::function<OpCost(const std::vector<Shape4>& inputs, const nlohmann::json& attrs)> cost;
  /// Max |device - reference| allowed, as abs + rel * |reference|.
  double abs_tolerance = 1e-3;
  double rel_tolerance = 1e-3;
};

/// Operators by name.
class Registry {
 public:
  /// Adds or replaces an operator.
  void add(Operator op);
  /// The operator, or nullptr.
  const Operator* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, Operator> ops_;
};

/// The process's operator registry (a function-local static, filled by register_builtin_operators).
Registry& operator_registry();

}  // namespace ldmsim
