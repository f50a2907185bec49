// Trace and run-directory inputs shared by `ldmsim trace` and `ldmsim report`.
#include "trace_inputs.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace ldmsim::cli {

TraceInput resolve_trace_input(const std::string& path, const std::string& stats) {
  TraceInput input;
  const std::filesystem::path p(path);
  if (std::filesystem::is_directory(p)) {
    input.trace = p / "trace.ldmtrace";
    if (!std::filesystem::is_regular_file(input.trace)) {
      throw ConfigError(fmt::format("{}: a run directory must hold trace.ldmtrace", path));
    }
  } else if (std::filesystem::is_regular_file(p)) {
    input.trace = p;
  } else {
    throw ConfigError(fmt::format("{}: no such trace file or run directory", path));
  }
  if (!stats.empty()) {
    if (!std::filesystem::is_regular_file(stats)) throw ConfigError(fmt::format("--stats {}: no such file", stats));
    input.stats = stats;
  } else {
    const auto sibling = input.trace.parent_path() / "stats.json";
    if (std::filesystem::is_regular_file(sibling)) input.stats = sibling;
  }
  return input;
}

void attach_run_stats(TraceSummary& summary, const std::filesystem::path& stats, bool explicit_file) {
  nlohmann::json j;
  try {
    std::ifstream in(stats);
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    if (explicit_file) throw ConfigError(fmt::format("{}: invalid JSON: {}", stats.string(), e.what()));
    return;
  }
  if (!apply_run_stats(summary, j) && explicit_file) {
    fmt::print(stderr, "ldmsim: warning: {} does not describe this trace's run (cycles differ); ignored\n",
               stats.string());
  }
}

}  // namespace ldmsim::cli
