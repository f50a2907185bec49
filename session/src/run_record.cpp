#include "ldmsim/session/run_record.hpp"

#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/output_file.hpp"

namespace ldmsim {

void write_run_record(const RunDirectory& dir, const nlohmann::json& stats, const nlohmann::json& run_info,
                      const Fault* fault, const TraceWriter& write_trace) {
  const nlohmann::json fault_record = fault != nullptr ? fault_json(*fault) : nlohmann::json(nullptr);
  const auto holds = [&stats](const char* key, const nlohmann::json& value) {
    const auto it = stats.find(key);
    return it != stats.end() && *it == value;
  };
  // A finished run's stats carry both already (RunResult::stats): a network's tree is thousands of nodes to copy.
  if (stats.is_object() && holds("tool_version", version()) && holds("fault", fault_record)) {
    write_file_atomically(dir.stats(), stats.dump(2) + "\n", "stats file");
  } else {
    nlohmann::json completed = stats;
    completed["tool_version"] = version();
    completed["fault"] = fault_record;
    write_file_atomically(dir.stats(), completed.dump(2) + "\n", "stats file");
  }
  if (!dir.trace().empty() && write_trace) write_trace(dir.trace(), {{"run", run_info}, {"fault", fault_record}});
}

}  // namespace ldmsim
