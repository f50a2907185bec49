// `ldmsim report RUN_DIR|TRACE -o report.html`: one self-contained HTML page with the trace summary, the layers
// (timeline, table, roofline), per-core utilization heat maps, bandwidth over time and the request-size histogram
// (tools/report_html.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "ldmsim/session/directory_lock.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/trace_analysis/rank_summary.hpp"
#include "ldmsim/trace_analysis/summary.hpp"
#include "report_html.hpp"
#include "trace_inputs.hpp"

namespace ldmsim::cli {
namespace {

/// A run's stats.json (bounded size and nesting), or null when there is none or it cannot be read.
nlohmann::json read_stats(const std::filesystem::path& stats) {
  if (stats.empty()) return nullptr;
  try {
    return read_json_file(stats, "stats file");
  } catch (const ConfigError&) {
    return nullptr;
  }
}

/// The machine's roof of a run's stats.json ("roofline": peak flops, peak DMA bandwidth), or null.
nlohmann::json run_roofline(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("roofline") || !j["roofline"].is_object()) return nullptr;
  const nlohmann::json& r = j["roofline"];
  const auto number_or_null = [&](const char* key) {
    return r.contains(key) && r[key].is_number() ? r[key] : nlohmann::json();
  };
  return {{"peak_flops_per_second", number_or_null("peak_flops_per_second")},
          {"peak_dma_bytes_per_second", number_or_null("peak_dma_bytes_per_second")}};
}

/// The models of a run of several models together (stats.json "models": name, start and end cycle, status), each
/// drawn as a bar; empty for a one-model run, or when the stats cannot be read.
nlohmann::json run_models(const nlohmann::json& j) {
  nlohmann::json models = nlohmann::json::array();
  if (!j.is_object() || !j.contains("models") || !j["models"].is_array()) return models;
  for (const nlohmann::json& m : j["models"]) {
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string() || !m.contains("start_cycle") ||
        !m["start_cycle"].is_number_unsigned() || !m.contains("end_cycle") || !m["end_cycle"].is_number_unsigned() ||
        m["end_cycle"].get<Cycle>() < m["start_cycle"].get<Cycle>()) {
      continue;
    }
    models.push_back({{"name", m["name"]},
                      {"start", m["start_cycle"]},
                      {"end", m["end_cycle"]},
                      {"status", m.contains("status") && m["status"].is_string() ? m["status"] : nlohmann::json("?")}});
  }
  return models;
}

struct ReportArgs {
  std::string input;
  std::string out = "report.html";
  std::string stats;
  std::size_t top = 20;
};

void report_command(const ReportArgs& args) {
  // Into a run directory only while no run owns it (held until the report is written).
  const DirectoryLock lock = lock_run_directory_of(args.out, "ldmsim report", "-o");
  // An MPI run directory (each rank's trace.rank<R>.ldmtrace, no trace.ldmtrace): a section per rank on top, and
  // the slowest rank's trace in the sections below.
  if (const std::filesystem::path dir(args.input);
      std::filesystem::is_directory(dir) && !std::filesystem::exists(dir / "trace.ldmtrace")) {
    if (const auto files = rank_traces(dir); !files.empty()) {
      for (const auto& file : files) check_not_input(args.out, {file}, "report");
      const RankSummary ranks = guarded_trace_call([&] { return summarize_ranks(files); });
      const auto slowest = std::max_element(ranks.ranks.begin(), ranks.ranks.end(),
                                            [](const RankRow& a, const RankRow& b) { return a.cycles < b.cycles; });
      const TraceSummary summary = guarded_trace_call(
          [&] { return summarize_trace(slowest->file, SummaryOptions{.top = args.top, .time_bins = 200}); });
      nlohmann::json data = to_json(summary);
      data["ranks"] = to_json(ranks);
      data["detail_rank"] = slowest->rank;
      write_file_atomically(args.out, render_report_html(data, "ldmsim report: " + args.input), "report");
      fmt::print("wrote {} ({} ranks, makespan {} cycles; rank {} in detail)\n", args.out, ranks.ranks.size(),
                 ranks.makespan, slowest->rank);
      return;
    }
  }
  const TraceInput input = resolve_trace_input(args.input, args.stats);
  check_not_input(args.out, {input.trace, input.stats}, "report");
  TraceSummary summary = guarded_trace_call(
      [&] { return summarize_trace(input.trace, SummaryOptions{.top = args.top, .time_bins = 200}); });
  if (!input.stats.empty()) attach_run_stats(summary, input.stats, !args.stats.empty());
  nlohmann::json data = to_json(summary);
  const nlohmann::json stats = read_stats(input.stats);
  if (nlohmann::json models = run_models(stats); !models.empty()) data["models"] = std::move(models);
  // The roof of the roofline picture, with the layers it places (those of stats that match the trace).
  if (!summary.layers.empty()) data["roofline"] = run_roofline(stats);
  const std::string html = render_report_html(data, "ldmsim report: " + input.trace.string());
  write_file_atomically(args.out, html, "report");
  fmt::print("wrote {} ({} DMA requests, {} core groups{})\n", args.out, summary.requests(), summary.groups.size(),
             summary.fault.is_null() ? "" : "; the run trapped");
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* r = app.add_subcommand("report", "Write a self-contained HTML report of a run directory or trace file");
  r->add_option("input", args->input,
                "Run directory (with trace.ldmtrace, stats.json; or an MPI run's trace.rank<R>.ldmtrace files: a row "
                "per rank) or a trace file")
      ->required();
  r->add_option("-o,--out", args->out, "Output HTML file")->capture_default_str();
  r->add_option("--stats", args->stats, "The run's stats.json (default: next to the trace)");
  r->add_option("--top", args->top, "How many slowest requests to list")->capture_default_str();
  add_examples(r, "Example: ldmsim report ldmsim-out -o report.html");
  r->callback([args] { report_command(*args); });
}

}  // namespace ldmsim::cli
