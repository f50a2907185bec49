// Typed run records as stats.json and host_times.json (see run_record.hpp).
#include "ldmsim/graph/run_record.hpp"

#include <cmath>

namespace ldmsim {

using nlohmann::json;

json to_json(const PlacementChoice& choice) {
  json out{{"placement", choice.placement}, {"estimated_cycles", std::llround(choice.estimated_cycles)}};
  const CostTerms& t = choice.terms;
  out["cost_class"] = choice.cost_class;
  out["terms"] = {{"compute", std::llround(t.compute)},
                  {"local", std::llround(t.local)},
                  {"remote", std::llround(t.remote)},
                  {"launch", std::llround(t.launch)},
                  {"exchange", std::llround(t.exchange)}};
  if (!choice.runner_up.empty()) {
    out["runner_up"] = choice.runner_up;
    out["runner_up_cycles"] = std::llround(choice.runner_up_cycles);
  }
  if (choice.pinned) out["pinned"] = true;
  return out;
}

json to_json(const OpRecord& op) {
  // Key by key into one object (its keys sorted either way): a braced list builds a two-element array per key
  // and then moves each into the object, twice the instructions for a network's hundreds of ops.
  json entry = json::object();
  json& groups = entry["groups"] = json::array();
  groups.get_ref<json::array_t&>().reserve(op.groups.size());
  for (const GroupDmaRecord& g : op.groups) {
    json& group = groups.emplace_back(json::object());
    group["dma_requests"] = g.dma_requests;
    group["dma_bytes"] = g.dma_bytes;
    group["dma_remote_bytes"] = g.dma_remote_bytes;
  }
  entry["index"] = op.index;
  entry["type"] = op.type;
  entry["name"] = op.name;
  entry["bound"] = op.bound;
  entry["peak_fraction"] = op.peak_fraction;
  entry["cycles"] = op.cycles;
  entry["start_cycle"] = op.start_cycle;
  entry["end_cycle"] = op.end_cycle;
  entry["seconds"] = op.seconds;
  entry["dma_requests"] = op.dma_requests;
  entry["dma_bytes"] = op.dma_bytes;
  entry["dma_remote_bytes"] = op.dma_remote_bytes;
  entry["flops"] = op.flops;
  entry["padding_bytes_added"] = op.padding_bytes_added;
  entry["device_bytes_live"] = op.device_bytes_live;
  json& plans = entry["plans"] = json::object();
  for (const auto& [tensor, plan] : op.plans) plans.emplace(tensor, plan);
  if (op.buffer) entry["buffer"] = *op.buffer;
  if (!op.metrics.is_null()) entry["metrics"] = op.metrics;
  if (const auto& s = op.split) {
    entry["split"] = {{"rule", s->rule},     {"mode", s->mode},     {"parallelism", s->parallelism},
                      {"pieces", s->pieces}, {"groups", s->groups}, {"reduction_levels", s->reduction_levels}};
  }
  if (const auto& p = op.constant_packs) {
    entry["constant_packs"] = {{"cores", p->cores}, {"bytes", p->bytes}, {"max_bytes", p->max_bytes}};
  }
  if (op.placement) entry["placement"] = to_json(*op.placement);
  return entry;
}

json to_json(const RelayoutRecord& r) {
  return {{"tensor", r.tensor}, {"before_op", r.before_op},     {"from", r.from},           {"to", r.to},
          {"cycles", r.cycles}, {"start_cycle", r.start_cycle}, {"end_cycle", r.end_cycle}, {"dma_bytes", r.dma_bytes}};
}

json to_json(const RunSummary& s, std::span<const OpRecord> ops) {
  json relayouts = json::array(), entries = json::array();
  for (const RelayoutRecord& r : s.relayouts) relayouts.push_back(to_json(r));
  for (const OpRecord& op : ops) entries.push_back(to_json(op));
  json stats = {{"workload", s.workload},
                {"arch", s.arch},
                {"staging", s.staging},
                {"cycles", s.cycles},
                {"seconds", s.seconds},
                {"dma_requests", s.dma_requests},
                {"dma_bytes", s.dma_bytes},
                {"ldm_high_water", s.ldm_high_water},
                {"padding", {{"bytes_added", s.padding_bytes_added}, {"bytes_staged", s.padding_bytes_staged}}},
                {"device_memory",
                 {{"peak_tensor_bytes", s.peak_tensor_bytes},
                  {"tensor_bytes_without_freeing", s.tensor_bytes_without_freeing},
                  {"tensors_freed", s.tensors_freed}}},
                {"relayouts", std::move(relayouts)},
                {"ops", std::move(entries)},
                {"machine", s.machine.to_json(false)}};
  if (const auto& split = s.split) {
    stats["split"] = {{"enabled", true},
                      {"mode", split->mode},
                      {"rounding", split->rounding},
                      {"constant_packs", split->constant_packs},
                      {"ops_split", split->ops_split},
                      {"replicated_constants", split->replicated_constants},
                      {"replicated_bytes", split->replicated_bytes}};
    stats["split"]["estimated_cycles"] = std::llround(split->estimated_cycles);  // the chosen or the rule's plan
    if (!split->pinned.empty()) stats["split"]["pinned"] = split->pinned;
  }
  return stats;
}

json host_times_json(const RunSummary& summary, std::span<const OpRecord> ops) {
  json entries = json::array();
  for (const OpRecord& op : ops) {
    entries.push_back({{"index", op.index},
                       {"type", op.type},
                       {"staging_host_seconds", op.staging_host_seconds},
                       {"host_seconds", op.host_seconds}});
  }
  return {{"staging_host_seconds", summary.staging_host_seconds},
          {"placement_host_seconds", summary.placement_host_seconds},
          {"placement_reused", summary.placement_reused},
          {"ops", std::move(entries)}};
}

}  // namespace ldmsim
