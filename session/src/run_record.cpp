#include "ldmsim/session/run_record.hpp"

#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/output_file.hpp"

namespace ldmsim {

namespace {

nlohmann::json fault_record_of(const Fault* fault) {
  return fault != nullptr ? fault_json(*fault) : nlohmann::json(nullptr);
}

void write_record(const RunDirectory& dir, const nlohmann::json& complete_stats, const nlohmann::json& run_info,
                  const nlohmann::json& fault_record, const TraceWriter& write_trace) {
  write_file_atomically(dir.stats(), complete_stats.dump(2) + "\n", "stats file");
  if (!dir.trace().empty() && write_trace) write_trace(dir.trace(), {{"run", run_info}, {"fault", fault_record}});
}

}  // namespace

void write_run_record(const RunDirectory& dir, const nlohmann::json& stats, const nlohmann::json& run_info,
                      const Fault* fault, const TraceWriter& write_trace) {
  const nlohmann::json fault_record = fault_record_of(fault);
  // Compared as text: 20 == 20.0 for nlohmann, but they are written differently.
  const auto holds = [&stats](const char* key, const nlohmann::json& value) {
    const auto it = stats.find(key);
    return it != stats.end() && it->dump() == value.dump();
  };
  // A finished run's stats carry both already (RunResult::stats): a network's tree is thousands of nodes to copy.
  if (stats.is_object() && holds("tool_version", version()) && holds("fault", fault_record)) {
    write_record(dir, stats, run_info, fault_record, write_trace);
    return;
  }
  nlohmann::json completed = stats;
  write_run_record(dir, std::move(completed), run_info, fault, write_trace);
}

void write_run_record(const RunDirectory& dir, nlohmann::json&& stats, const nlohmann::json& run_info,
                      const Fault* fault, const TraceWriter& write_trace) {
  const nlohmann::json fault_record = fault_record_of(fault);
  stats["tool_version"] = version();
  stats["fault"] = fault_record;
  write_record(dir, stats, run_info, fault_record, write_trace);
}

}  // namespace ldmsim
