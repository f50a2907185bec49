// Trace and run-directory inputs shared by `ldmsim trace` and `ldmsim report`.
#include "trace_inputs.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ldmsim/sim/input_file.hpp"

namespace ldmsim::cli {

TraceInput resolve_trace_input(const std::string& path, const std::string& stats) {
  TraceInput input;
  const std::filesystem::path p(path);
  if (std::filesystem::is_directory(p)) {
    input.trace = p / "trace.ldmtrace";
    if (!std::filesystem::is_regular_file(input.trace)) {
      throw ConfigError(fmt::format("{}: a run directory must hold trace.ldmtrace", path));
    }
  } else if (std::filesystem::exists(p)) {
    (void)check_input_file(p, "trace file or run directory", ~std::uint64_t{0});  // names a device, FIFO, ...
    input.trace = p;
  } else {
    throw ConfigError(fmt::format("{}: no such trace file or run directory", path));
  }
  if (std::filesystem::exists(input.trace.parent_path() / "RUN_INCOMPLETE")) {
    fmt::print(stderr,
               "ldmsim: warning: {} holds RUN_INCOMPLETE: its run was interrupted, so these files may be "
               "from an earlier run\n",
               input.trace.parent_path().string());
  }
  if (!stats.empty()) {
    (void)check_input_file(stats, "--stats file", ~std::uint64_t{0});  // names a missing file, a device, a FIFO, ...
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
    j = read_json_file(stats, "stats file");  // bounded size and nesting
  } catch (const ConfigError&) {
    if (explicit_file) throw;
    return;
  }
  if (!apply_run_stats(summary, j) && explicit_file) {
    fmt::print(stderr, "ldmsim: warning: {} does not describe this trace's run (cycles differ); ignored\n",
               stats.string());
  }
}

std::vector<LayerSpan> run_layers(const TraceInput& input, bool explicit_file) {
  if (input.stats.empty()) return {};
  TraceSummary header_only;  // what attach_run_stats compares against: the header's cycles, no events read
  header_only.cycles = guarded_trace_call([&] {
    const nlohmann::json header = TraceReader(input.trace).header();
    return header.contains("cycles") && header["cycles"].is_number_unsigned() ? header["cycles"].get<Cycle>() : 0;
  });
  attach_run_stats(header_only, input.stats, explicit_file);
  return std::move(header_only.layers);
}

}  // namespace ldmsim::cli
