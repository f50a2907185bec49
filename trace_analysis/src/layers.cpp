// The layers of a run from its stats.json (see layers.hpp).
#include "ldmsim/trace_analysis/layers.hpp"

#include "json_or.hpp"

namespace ldmsim {
using trace_detail::json_or;

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
