// Private helpers of the operator definitions: attribute parsing with named errors, shape checks, launches.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

#include "ldmsim/runtime/operator.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::kernels::detail {

/// An integer attribute >= min_value (ConfigError naming it otherwise).
inline long attr_int(const nlohmann::json& attrs, const char* key, long fallback, long min_value) {
  if (!attrs.is_object() || !attrs.contains(key)) return fallback;
  const auto& v = attrs.at(key);
  if (!v.is_number_integer() || v.get<long>() < min_value) {
    throw ConfigError(fmt::format("attribute '{}' must be an integer >= {}, got {}", key, min_value, v.dump()));
  }
  return v.get<long>();
}

/// A number attribute (ConfigError naming it otherwise).
inline double attr_num(const nlohmann::json& attrs, const char* key, double fallback) {
  if (!attrs.is_object() || !attrs.contains(key)) return fallback;
  const auto& v = attrs.at(key);
  if (!v.is_number()) throw ConfigError(fmt::format("attribute '{}' must be a number, got {}", key, v.dump()));
  return v.get<double>();
}

/// Rejects attributes not in `known`.
inline void check_attrs(const nlohmann::json& attrs, std::initializer_list<const char*> known) {
  if (attrs.is_null()) return;
  if (!attrs.is_object()) throw ConfigError("attributes must be a JSON object");
  for (const auto& [key, value] : attrs.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) throw ConfigError(fmt::format("unknown attribute '{}'", key));
  }
}

inline void require_rank4(const Shape4& s, const char* what) {
  if (s.rank != 4) throw ConfigError(fmt::format("{} must be 4-D NCHW, got {}", what, s.str()));
}

/// Runs `kernel(core, args...)` on every core of every group under `name` and joins.
template <typename F, typename... Args>
void launch_all(Machine& machine, const std::string& name, F&& kernel, Args&&... args) {
  machine.launch(LaunchSpec{.name = name}, std::forward<F>(kernel), std::forward<Args>(args)...).join();
}

}  // namespace ldmsim::kernels::detail
