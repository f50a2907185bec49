// `ldmsim trace summary|export|filter|diff`: inspect DMA trace files. Every subcommand streams the file block by
// block; a malformed trace (TraceFormatError, naming the byte offset) or an unreadable file exits with code 2.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "ldmsim/session/directory_lock.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "ldmsim/trace_analysis/diff.hpp"
#include "ldmsim/trace_analysis/export.hpp"
#include "ldmsim/trace_analysis/filter.hpp"
#include "ldmsim/trace_analysis/perfetto_export.hpp"
#include "ldmsim/trace_analysis/rank_summary.hpp"
#include "ldmsim/trace_analysis/summary.hpp"
#include "trace_inputs.hpp"

namespace ldmsim::cli {
namespace {

struct SummaryArgs {
  std::string file;
  bool json = false;
  std::size_t top = 10;
  std::optional<int> cg;
  std::string stats;
};

void summary_command(const SummaryArgs& args) {
  // An MPI run directory (each rank's trace.rank<R>.ldmtrace, no trace.ldmtrace): a row per rank.
  if (const std::filesystem::path dir(args.file);
      std::filesystem::is_directory(dir) && !std::filesystem::exists(dir / "trace.ldmtrace")) {
    if (const auto files = rank_traces(dir); !files.empty()) {
      const RankSummary ranks = guarded_trace_call([&] { return summarize_ranks(files); });
      if (args.json) {
        std::cout << to_json(ranks).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      } else {
        std::cout << terminal_safe(format_rank_summary(ranks));
      }
      return;
    }
  }
  const TraceInput input = resolve_trace_input(args.file, args.stats);
  TraceSummary summary =
      guarded_trace_call([&] { return summarize_trace(input.trace, SummaryOptions{.top = args.top}); });
  if (!input.stats.empty()) attach_run_stats(summary, input.stats, !args.stats.empty());
  if (args.cg && std::none_of(summary.groups.begin(), summary.groups.end(),
                              [&args](const GroupSummary& g) { return g.cg == *args.cg; })) {
    throw ConfigError(
        fmt::format("--cg {}: the trace has {} core group(s), numbered from 0", *args.cg, summary.groups.size()));
  }
  if (args.json) {
    // Marker texts are bytes from the trace: what is not UTF-8 is replaced, as JSON needs.
    std::cout << to_json(summary).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << terminal_safe(format_summary(summary, SummaryView{.cg = args.cg, .cores = args.top}));
  }
}

struct ExportArgs {
  std::string file;
  std::string format = "chrome";
  std::string out;
  std::size_t bins = 200;
  std::string stats;
  std::string compression;  ///< perfetto only; empty: zstd
};

PerfettoCompression perfetto_compression(const std::string& name) {
  if (name == "deflate") return PerfettoCompression::kDeflate;
  if (name == "none") return PerfettoCompression::kNone;
  return PerfettoCompression::kZstd;
}

void export_command(const ExportArgs& args) {
  if (!args.compression.empty() && args.format != "perfetto") {
    throw ConfigError("--compression applies to --format perfetto only (the format is " + args.format + ")");
  }
  // Written to a temporary and renamed only when the whole trace was exported: a bad or cut trace leaves an
  // existing output as it was. Into a run directory only while no run owns it (held until the file is written).
  const DirectoryLock lock = lock_run_directory_of(args.out, "ldmsim trace export", "-o");
  // An MPI run directory (each rank's trace.rank<R>.ldmtrace, no trace.ldmtrace): every rank in one Perfetto trace.
  if (const std::filesystem::path dir(args.file);
      std::filesystem::is_directory(dir) && !std::filesystem::exists(dir / "trace.ldmtrace")) {
    if (const auto files = rank_traces(dir); !files.empty()) {
      if (args.format != "perfetto") {
        throw ConfigError(
            fmt::format("{} holds an MPI run's ranks: export them with --format perfetto, or one "
                        "rank's trace.rank<R>.ldmtrace file with --format {}",
                        args.file, args.format));
      }
      std::vector<RankTrace> ranks;
      for (const auto& file : files) {
        check_not_input(args.out, {file}, "export file");
        ranks.push_back({rank_of_trace(file), file});
      }
      AtomicFile out(args.out, "export file");
      const ExportCounts counts = guarded_trace_call([&] {
        return export_perfetto_ranks(ranks, out.stream(), {.compression = perfetto_compression(args.compression)});
      });
      out.commit();
      fmt::print("wrote {} ({} ranks, {} DMA requests, {} markers)\n", args.out, ranks.size(), counts.requests,
                 counts.markers);
      return;
    }
  }
  const TraceInput input = resolve_trace_input(args.file, args.stats);
  check_not_input(args.out, {input.trace, input.stats}, "export file");
  AtomicFile out(args.out, "export file");
  const std::vector<LayerSpan> layers =
      args.format != "csv" ? run_layers(input, !args.stats.empty()) : std::vector<LayerSpan>{};
  const ExportCounts counts = guarded_trace_call([&] {
    if (args.format == "csv") return export_csv(input.trace, out.stream());
    if (args.format == "perfetto") {
      return export_perfetto(input.trace, out.stream(), layers,
                             {.compression = perfetto_compression(args.compression)});
    }
    return export_chrome_json(input.trace, out.stream(), args.bins, layers);
  });
  out.commit();
  fmt::print("wrote {} ({} DMA requests{}{})\n", args.out, counts.requests,
             args.format == "csv" ? std::string() : fmt::format(", {} markers", counts.markers),
             layers.empty() ? std::string() : fmt::format(", {} layers", layers.size()));
}

struct FilterArgs {
  std::string file;
  std::string out;
  std::optional<int> cg;
  std::optional<int> core;
  std::string op;
  std::uint32_t min_bytes = 0;
  std::optional<Cycle> from;
  std::optional<Cycle> to;
};

void filter_command(const FilterArgs& args) {
  TraceFilter filter;
  filter.cg = args.cg;
  filter.core = args.core;
  if (args.op == "get") filter.op = DmaOp::kGet;
  if (args.op == "put") filter.op = DmaOp::kPut;
  filter.min_bytes = args.min_bytes;
  filter.from = args.from;
  filter.to = args.to;
  if (filter.from && filter.to && *filter.from > *filter.to) {
    throw ConfigError(fmt::format("--from {} is after --to {}", *filter.from, *filter.to));
  }
  const DirectoryLock lock = lock_run_directory_of(args.out, "ldmsim trace filter", "-o");
  const std::filesystem::path trace = resolve_trace_input(args.file, {}).trace;
  check_not_input(args.out, {trace}, "filtered trace");
  const TraceTotals totals = guarded_trace_call([&] { return filter_trace(trace, args.out, filter); });
  fmt::print("wrote {} ({} DMA requests, {} markers, {} core groups)\n", args.out, totals.dma_events, totals.markers,
             totals.groups);
}

struct DiffArgs {
  std::string a;
  std::string b;
  bool json = false;
};

void diff_command(const DiffArgs& args) {
  const std::filesystem::path a = resolve_trace_input(args.a, {}).trace, b = resolve_trace_input(args.b, {}).trace;
  const TraceDiff diff = guarded_trace_call([&] { return diff_traces(a, b); });
  if (args.json) {
    std::cout << diff.to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << terminal_safe(diff.format());
  }
  if (!diff.identical) throw CommandFailed("the traces differ");
}

}  // namespace

void add_trace_command(CLI::App& app) {
  CLI::App* trace = app.add_subcommand("trace", "Inspect DMA trace files (.ldmtrace): summary, export, filter, diff");
  trace->require_subcommand(1);

  auto summary = std::make_shared<SummaryArgs>();
  CLI::App* s =
      trace->add_subcommand("summary", "Run info, per-group and per-core DMA activity, sizes, slowest, faults");
  s->add_option("file", summary->file,
                "Trace file, or a run directory holding trace.ldmtrace (or an MPI run's trace.rank<R>.ldmtrace files: "
                "a row per rank)")
      ->required();
  s->add_flag("--json", summary->json, "Machine-readable JSON output");
  s->add_option("--top", summary->top,
                "How many slowest requests to list, and busiest cores in the per-core table (0: every core)")
      ->capture_default_str();
  s->add_option("--cg", summary->cg, "Only this core group in the group and core tables and the slowest requests");
  s->add_option("--stats", summary->stats,
                "The run's stats.json (default: stats.json next to the trace, if it matches)");
  s->callback([summary] { summary_command(*summary); });
  add_examples(s, "Example: ldmsim trace summary ldmsim-out --cg 0 --top 5");

  auto exp = std::make_shared<ExportArgs>();
  CLI::App* e =
      trace->add_subcommand("export", "Export to Perfetto's native protobuf format, Chrome Trace Event JSON or CSV");
  e->add_option("file", exp->file, "Trace file or run directory")->required();
  e->add_option("--format", exp->format,
                "perfetto (protobuf, compact: opens in ui.perfetto.dev), chrome (JSON) or csv (a row per request)")
      ->check(CLI::IsMember({"chrome", "csv", "perfetto"}))
      ->capture_default_str();
  e->add_option("-o,--out", exp->out, "Output file")->required();
  e->add_option("--bins", exp->bins, "Bandwidth counter samples per core group (chrome)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
  e->add_option("--stats", exp->stats,
                "The run's stats.json, whose layers become slices (default: stats.json next to the trace, if it "
                "matches)");
  e->add_option("--compression", exp->compression,
                "perfetto: zstd (default, fast; recent Perfetto), deflate (for older Perfetto readers) or none "
                "(what protoc --decode reads)")
      ->check(CLI::IsMember({"zstd", "deflate", "none"}));
  add_examples(
      e,
      "Examples:\n  ldmsim trace export ldmsim-out --format perfetto -o run.pftrace\n  ldmsim trace export ldmsim-out "
      "--format csv -o requests.csv");
  e->callback([exp] { export_command(*exp); });

  auto filter = std::make_shared<FilterArgs>();
  CLI::App* f = trace->add_subcommand("filter", "Write a smaller valid trace with the matching requests and markers");
  f->add_option("file", filter->file, "Trace file or run directory")->required();
  f->add_option("-o,--out", filter->out, "Output trace file")->required();
  f->add_option("--cg", filter->cg, "Only this core group");
  f->add_option("--core", filter->core, "Only this core (cg-local id, row*cols+col)");
  f->add_option("--op", filter->op, "Only get or put requests")->check(CLI::IsMember({"get", "put"}));
  f->add_option("--min-bytes", filter->min_bytes, "Only requests of at least this many bytes")
      ->check(fits_unsigned<std::uint32_t>());
  f->add_option("--from", filter->from, "Only requests ending at or after this cycle (markers at or after it)")
      ->check(fits_unsigned<Cycle>());
  f->add_option("--to", filter->to, "Only requests issued at or before this cycle (markers at or before it)")
      ->check(fits_unsigned<Cycle>());
  f->callback([filter] { filter_command(*filter); });
  add_examples(f, "Example: ldmsim trace filter ldmsim-out --cg 0 --op put -o puts.ldmtrace");

  auto diff = std::make_shared<DiffArgs>();
  CLI::App* d = trace->add_subcommand("diff", "Compare two traces (exit 1 if they differ)");
  d->add_option("a", diff->a, "First trace file or run directory")->required();
  d->add_option("b", diff->b, "Second trace file or run directory")->required();
  d->add_flag("--json", diff->json, "Machine-readable JSON output");
  d->callback([diff] { diff_command(*diff); });
  add_examples(d, "Example: ldmsim trace diff run-a run-b");
  // After the subcommands: they inherit the footer as it is when they are added.
  add_examples(trace, "Example: ldmsim trace summary ldmsim-out (each subcommand's --help has its own)");
}

}  // namespace ldmsim::cli
