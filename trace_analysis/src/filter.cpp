// Trace filter: reads blocks, copies matching events into a reused chunk and matching markers into a reused
// vector, and writes them through TraceWriter in the same group order.
#include "ldmsim/trace_analysis/filter.hpp"

#include <string>
#include <vector>

namespace ldmsim {

bool TraceFilter::keep(int group, const DmaEvent& e) const {
  if (cg && *cg != group) return false;
  if (core && *core != static_cast<int>(e.core)) return false;
  if (op && *op != e.op) return false;
  if (e.length < min_bytes) return false;
  if (from && e.end < *from) return false;
  if (to && e.issue > *to) return false;
  return true;
}

bool TraceFilter::keep(int group, const Marker& m) const {
  if (cg && *cg != group) return false;
  if (m.kind == MarkerKind::kLaunchBegin || m.kind == MarkerKind::kLaunchEnd) return true;
  if (core && *core != m.core) return false;
  if (from && m.cycle < *from) return false;
  if (to && m.cycle > *to) return false;
  return true;
}

nlohmann::json TraceFilter::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (cg) j["cg"] = *cg;
  if (core) j["core"] = *core;
  if (op) j["op"] = std::string(to_string(*op));
  if (min_bytes != 0) j["min_bytes"] = min_bytes;
  if (from) j["from"] = *from;
  if (to) j["to"] = *to;
  return j;
}

TraceTotals filter_trace(const std::filesystem::path& in, const std::filesystem::path& out, const TraceFilter& filter) {
  TraceReader reader(in);
  nlohmann::json header = reader.header();
  header["filter"] = filter.to_json();
  header["filtered_from"] = in.filename().string();
  TraceWriter writer(out, header);
  TraceBlock block;
  DmaChunk kept;
  std::vector<Marker> markers;
  int last_cg = -1;
  bool wrote_markers = true;
  while (reader.next(block)) {
    if (filter.cg && *filter.cg != block.cg) continue;
    if (block.cg != last_cg) {
      if (!wrote_markers) writer.write_markers(last_cg, {});  // keep every selected group, even if empty
      last_cg = block.cg;
      wrote_markers = false;
    }
    if (block.kind == TraceBlockKind::kDma) {
      kept = DmaChunk{};
      for (std::size_t i = 0; i < block.chunk.size(); ++i) {
        const DmaEvent e = block.chunk.at(i);
        if (filter.keep(block.cg, e)) kept.push(e);
      }
      if (kept.size() > 0) writer.write_dma(block.cg, kept);
    } else {
      markers.clear();
      for (const auto& m : block.markers)
        if (filter.keep(block.cg, m)) markers.push_back(m);
      writer.write_markers(block.cg, markers);
      wrote_markers = true;
    }
  }
  if (!wrote_markers) writer.write_markers(last_cg, {});
  writer.finish();
  return writer.totals();
}

}  // namespace ldmsim
