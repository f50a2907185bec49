// The layers of a run from its stats.json (see layers.hpp).
#include "ldmsim/trace_analysis/layers.hpp"

#include <type_traits>

#include "json_or.hpp"

namespace ldmsim {
using trace_detail::json_or;

namespace {

/// op[key] as T when it is there and fits T, else unset.
template <typename T>
std::optional<T> optional_field(const nlohmann::json& op, const char* key) {
  const auto it = op.find(key);
  if (it == op.end() || !it->is_number()) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    if (!it->is_number_unsigned()) return std::nullopt;
  }
  return it->get<T>();
}

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace

std::vector<LayerSpan> layers_from_stats(const nlohmann::json& stats) {
  std::vector<LayerSpan> layers;
  if (!stats.is_object() || !stats.contains("ops") || !stats["ops"].is_array()) return layers;
  for (const nlohmann::json& op : stats["ops"]) {
    if (layers.size() == kMaxLayers) break;
    if (!op.is_object() || !op.contains("start_cycle") || !op["start_cycle"].is_number_unsigned() ||
        !op.contains("end_cycle") || !op["end_cycle"].is_number_unsigned()) {
      continue;
    }
    LayerSpan l;
    l.name = json_or<std::string>(op, "name", "");
    l.type = json_or<std::string>(op, "type", "");
    l.start = op["start_cycle"].get<Cycle>();
    l.end = op["end_cycle"].get<Cycle>();
    if (l.name.empty() || l.type.empty() || l.end < l.start) continue;
    l.bound = json_or<std::string>(op, "bound", "?");
    l.dma_bytes = json_or<std::uint64_t>(op, "dma_bytes", 0);
    l.peak_fraction = json_or<double>(op, "peak_fraction", 0.0);
    l.ldm_high_water = optional_field<std::uint64_t>(op, "ldm_high_water");
    l.arithmetic_intensity = optional_field<double>(op, "arithmetic_intensity");
    l.roofline_fraction = optional_field<double>(op, "roofline_fraction");
    l.roofline_limit = json_or<std::string>(op, "roofline_limit", "");
    layers.push_back(std::move(l));
  }
  return layers;
}

nlohmann::json to_json(const LayerSpan& layer) {
  return {{"name", layer.name},
          {"type", layer.type},
          {"bound", layer.bound},
          {"start", layer.start},
          {"end", layer.end},
          {"cycles", layer.end - layer.start},
          {"dma_bytes", layer.dma_bytes},
          {"peak_fraction", layer.peak_fraction},
          {"ldm_high_water", or_null(layer.ldm_high_water)},
          {"arithmetic_intensity", or_null(layer.arithmetic_intensity)},
          {"roofline_fraction", or_null(layer.roofline_fraction)},
          {"roofline_limit", layer.roofline_limit}};
}

}  // namespace ldmsim
