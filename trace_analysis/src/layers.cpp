// The layers of a run from its stats.json (see layers.hpp).
#include "ldmsim/trace_analysis/layers.hpp"

namespace ldmsim {
namespace {

template <typename T>
T field_or(const nlohmann::json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else if constexpr (std::is_floating_point_v<T>) {
    return it->is_number() ? it->template get<T>() : fallback;
  } else {
    return it->is_number_unsigned() ? it->template get<T>() : fallback;
  }
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
    l.name = field_or<std::string>(op, "name", "");
    l.type = field_or<std::string>(op, "type", "");
    l.start = op["start_cycle"].get<Cycle>();
    l.end = op["end_cycle"].get<Cycle>();
    if (l.name.empty() || l.type.empty() || l.end < l.start) continue;
    l.bound = field_or<std::string>(op, "bound", "?");
    l.dma_bytes = field_or<std::uint64_t>(op, "dma_bytes", 0);
    l.peak_fraction = field_or<double>(op, "peak_fraction", 0.0);
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
          {"peak_fraction", layer.peak_fraction}};
}

}  // namespace ldmsim
