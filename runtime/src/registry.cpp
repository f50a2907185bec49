// The operator registry: a function-local static map from name to operator.
#include "ldmsim/runtime/operator.hpp"

namespace ldmsim {

void Registry::add(Operator op) {
  const std::string name = op.name;
  ops_.insert_or_assign(name, std::move(op));
}

const Operator* Registry::find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, op] : ops_) out.push_back(name);
  return out;
}

Registry& operator_registry() {
  static Registry registry;
  return registry;
}

}  // namespace ldmsim
