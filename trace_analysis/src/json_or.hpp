// Private: reading a field of an untrusted JSON tree (a stats.json, a trace header) with a fallback for a
// missing field or one of the wrong type or range, never an exception.
#pragma once

#include <algorithm>
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

/// What the exports read of a trace header's arch: its clock (1 GHz when absent or not positive) and the columns
/// of its core mesh (1 when absent), which turn core ids into "row,col".
struct HeaderArch {
  double clock_hz = 1e9;
  int cols = 1;
};

inline HeaderArch header_arch(const nlohmann::json& header) {
  HeaderArch out;
  const nlohmann::json arch = header.value("arch", nlohmann::json::object());
  if (arch.contains("clock_hz") && arch["clock_hz"].is_number() && arch["clock_hz"].get<double>() > 0) {
    out.clock_hz = arch["clock_hz"].get<double>();
  }
  const nlohmann::json cores =
      arch.value("core_groups", nlohmann::json::object()).value("cores", nlohmann::json::object());
  if (cores.contains("cols") && cores["cols"].is_number_integer()) out.cols = std::max(1, cores["cols"].get<int>());
  return out;
}

}  // namespace ldmsim::trace_detail
