// Private: reading a field of an untrusted JSON tree (a stats.json, a trace header) with a fallback for a
// missing field or one of the wrong type or range, never an exception.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

namespace ldmsim::trace_detail {

/// j[key] as T, or `fallback` when j is not an object, the key is missing or null, or the value does not fit T.
template <typename T>
T json_or(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if constexpr (std::is_integral_v<T>) {
    // Only integers that fit T: a float or an out-of-range value must not reach a narrowing conversion.
    if (it->is_number_unsigned()) {
      const auto v = it->get<std::uint64_t>();
      return std::in_range<T>(v) ? static_cast<T>(v) : fallback;
    }
    if (it->is_number_integer()) {
      const auto v = it->get<std::int64_t>();
      return std::in_range<T>(v) ? static_cast<T>(v) : fallback;
    }
    return fallback;
  } else {
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception&) {
      return fallback;
    }
  }
}

}  // namespace ldmsim::trace_detail
