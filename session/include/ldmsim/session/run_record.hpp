// The one place a run's record is written into its directory, whether the run finished or trapped: stats.json with
// the tool's version and the fault (null when it finished), and the trace, whose header carries the run's
// description and the same fault. A trapped run so leaves a consistent set up to the fault.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

/// Writes a trace file with this header information (Machine::write_trace, ConcurrentMachine::write_trace).
using TraceWriter = std::function<void(const std::filesystem::path& file, const nlohmann::json& info)>;

/// Writes `stats` (plus "tool_version" and "fault") to dir.stats() and, when the directory has a trace and
/// `write_trace` is given, the trace with {"run": run_info, "fault": ...}. `stats` is copied only when those two
/// would not be written exactly as it holds them (the same text).
void write_run_record(const RunDirectory& dir, const nlohmann::json& stats, const nlohmann::json& run_info,
                      const Fault* fault, const TraceWriter& write_trace);
/// The same, completing `stats` in place.
void write_run_record(const RunDirectory& dir, nlohmann::json&& stats, const nlohmann::json& run_info,
                      const Fault* fault, const TraceWriter& write_trace);

}  // namespace ldmsim
