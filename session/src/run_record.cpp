#include "ldmsim/session/run_record.hpp"

#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/output_file.hpp"

namespace ldmsim {

void write_run_record(const RunDirectory& dir, nlohmann::json stats, const nlohmann::json& run_info, const Fault* fault,
                      const TraceWriter& write_trace) {
  const nlohmann::json fault_record = fault != nullptr ? fault_json(*fault) : nlohmann::json(nullptr);
  stats["tool_version"] = version();
  stats["fault"] = fault_record;
  write_file_atomically(dir.stats(), stats.dump(2) + "\n", "stats file");
  if (!dir.trace().empty() && write_trace) write_trace(dir.trace(), {{"run", run_info}, {"fault", fault_record}});
}

}  // namespace ldmsim
