// `ldmsim report RUN_DIR|TRACE -o report.html`: one self-contained HTML page with the trace summary, per-core
// utilization heat maps, bandwidth over time and the request-size histogram (tools/report_html.cpp).
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "ldmsim/session/directory_lock.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/trace_analysis/summary.hpp"
#include "report_html.hpp"
#include "trace_inputs.hpp"

namespace ldmsim::cli {
namespace {

struct ReportArgs {
  std::string input;
  std::string out = "report.html";
  std::string stats;
  std::size_t top = 20;
};

void report_command(const ReportArgs& args) {
  // Into a run directory only while no run owns it (held until the report is written).
  const DirectoryLock lock = lock_run_directory_of(args.out, "ldmsim report", "-o");
  const TraceInput input = resolve_trace_input(args.input, args.stats);
  check_not_input(args.out, {input.trace, input.stats}, "report");
  TraceSummary summary = guarded_trace_call(
      [&] { return summarize_trace(input.trace, SummaryOptions{.top = args.top, .time_bins = 200}); });
  if (!input.stats.empty()) attach_run_stats(summary, input.stats, !args.stats.empty());
  const std::string html = render_report_html(to_json(summary), "ldmsim report: " + input.trace.string());
  write_file_atomically(args.out, html, "report");
  fmt::print("wrote {} ({} DMA requests, {} core groups{})\n", args.out, summary.requests(), summary.groups.size(),
             summary.fault.is_null() ? "" : "; the run trapped");
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* r = app.add_subcommand("report", "Write a self-contained HTML report of a run directory or trace file");
  r->add_option("input", args->input, "Run directory (with trace.ldmtrace, stats.json) or a trace file")->required();
  r->add_option("-o,--out", args->out, "Output HTML file")->capture_default_str();
  r->add_option("--stats", args->stats, "The run's stats.json (default: next to the trace)");
  r->add_option("--top", args->top, "How many slowest requests to list")->capture_default_str();
  r->callback([args] { report_command(*args); });
}

}  // namespace ldmsim::cli
