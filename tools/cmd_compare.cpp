// `ldmsim compare RUN_A RUN_B [...]`: runs of one model side by side, layer by layer (trace_analysis/compare.hpp),
// as a text table, JSON, or an HTML page.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "compare_html.hpp"
#include "ldmsim/session/directory_lock.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "ldmsim/trace_analysis/compare.hpp"

namespace ldmsim::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> runs;
  bool json = false;
  std::string html;
  std::size_t top = 0;
};

/// A run directory's stats.json, or the stats file named.
std::filesystem::path stats_file(const std::string& run) {
  const std::filesystem::path path(run);
  if (std::filesystem::is_directory(path)) {
    const std::filesystem::path stats = path / "stats.json";
    if (!std::filesystem::exists(stats))
      throw ConfigError(fmt::format("{}: a run directory must hold stats.json", run));
    return stats;
  }
  return path;
}

void compare_command(const CompareArgs& args) {
  std::vector<nlohmann::json> stats;
  std::vector<std::filesystem::path> files;
  for (const std::string& run : args.runs) {
    files.push_back(stats_file(run));
    stats.push_back(read_json_file(files.back(), "stats file"));
    if (!stats.back().contains("ops") && stats.back().contains("models")) {
      throw ConfigError(
          fmt::format("{}: the summary of several models run together: compare its models' "
                      "directories ({}/NAME)",
                      run, run));
    }
  }
  // Into a run directory only while no run owns it (held until the page is written), as report and export do.
  DirectoryLock lock;
  if (!args.html.empty()) {
    lock = lock_run_directory_of(args.html, "ldmsim compare", "--html");
    check_not_input(args.html, files, "--html file");
    check_output_target(args.html, "--html file");
  }
  const Comparison comparison = compare_runs(stats, args.runs);
  if (args.json) {
    std::cout << to_json(comparison).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << terminal_safe(format_comparison(comparison, args.top));
  }
  if (!args.html.empty()) {
    write_file_atomically(args.html, render_compare_html(comparison), "--html file");
    fmt::print(stderr, "wrote {}\n", args.html);
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* c = app.add_subcommand(
      "compare", "Compare runs of a model layer by layer (layers lined up by their source names, fused or not)");
  c->add_option("runs", args->runs, "Run directories (with stats.json) or stats.json files; the first is A")
      ->required()
      ->expected(2, -1);
  c->add_flag("--json", args->json, "Machine-readable JSON output");
  c->add_option("--html", args->html, "Also write the comparison as an HTML page to this file");
  c->add_option("--top", args->top, "Show only the N rows whose cycles changed most (0: every row)")
      ->capture_default_str();
  add_examples(c, "Example: ldmsim compare out-fused out-unfused --top 10 --html compare.html");
  c->callback([args] { compare_command(*args); });
}

}  // namespace ldmsim::cli
