// `ldmsim run [WORKLOAD]`: with no workload, the built-in demo on the chosen arch. Prints a summary and writes
// OUT/stats.json and the trace, also when a fault traps (the trace header then describes the fault).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "demo.hpp"
#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/lint_sites.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/session/run_record.hpp"
#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "ldmsim/trace_analysis/units_text.hpp"
#include "model_flags.hpp"

namespace ldmsim::cli {
namespace {

struct RunOptions {
  std::vector<std::string> workloads;
  bool concurrent = false;
  ModelFlags model;
  std::string out = "ldmsim-out";
  std::string trace;
  bool no_trace = false;
  std::string trace_codec = "zstd";
  std::string trace_spill_dir;
  unsigned threads = 0;
  bool lint = false;
  bool demo_fault = false;
  bool demo_race = false;
  bool dump_graph = false;
  bool explain = false;
  std::string layers_csv;
  std::string progress = "auto";
};

void write_outputs(const Machine& machine, const RunOptions& options, const RunDirectory& paths,
                   const std::vector<DemoKernelResult>& kernels, const Fault* fault) {
  const char* policy = options.lint ? "lint" : "trap";
  nlohmann::json stats = machine.stats().to_json();
  stats["arch"] = machine.arch().name;
  stats["workload"] = "demo";
  stats["alignment_policy"] = policy;
  stats["lint_warnings"] = machine.lint_warnings();
  if (machine.lint_warnings() > 0) stats["lint"] = lint_sites_json(lint_sites(machine));
  stats["kernels"] = nlohmann::json::array();
  bool verified = fault == nullptr;
  for (const auto& kernel : kernels) {
    stats["kernels"].push_back(kernel.to_json());
    verified = verified && kernel.status == "ok";
  }
  stats["verified"] = verified;
  if (enabled_checks(machine).any()) stats["check"] = check_reports_json(check_reports(machine));
  const nlohmann::json run_info = {{"tool_version", version()}, {"workload", "demo"}, {"alignment_policy", policy}};
  write_run_record(
      paths, std::move(stats), run_info, fault,
      [&machine](const std::filesystem::path& file, const nlohmann::json& info) { machine.write_trace(file, info); });
}

void print_summary(const Machine& machine, const std::vector<DemoKernelResult>& kernels, const RunDirectory& paths) {
  const Arch& arch = machine.arch();
  const RunStats stats = machine.stats();
  fmt::print("ldmsim {}: built-in demo on {} ({})\n\n", version(), arch.name, arch_summary(arch));
  fmt::print("  {:<10} {:>12} {:>13} {:>12}  {:<8} {}\n", "kernel", "cycles", "DMA requests", "DMA bytes", "check",
             "what it does");
  std::uint64_t elements = 0;
  bool all_ok = true;
  for (const auto& k : kernels) {
    fmt::print("  {:<10} {:>12} {:>13} {:>12}  {:<8} {}\n", k.name, k.cycles, k.dma_requests,
               bytes_text(static_cast<double>(k.dma_bytes)), k.status, k.summary);
    elements += k.elements;
    all_ok = all_ok && k.status == "ok";
  }
  const double bandwidth = stats.seconds > 0 ? static_cast<double>(stats.dma_bytes()) / stats.seconds : 0.0;
  fmt::print("\ntotal: {} cycles = {} simulated at {:g} GHz\n", stats.cycles, seconds_text(stats.seconds),
             arch.clock_hz / 1e9);
  fmt::print("DMA: {} requests, {} moved, {} achieved over {} core group{}\n", stats.dma_requests(),
             bytes_text(static_cast<double>(stats.dma_bytes())), rate_text(bandwidth, "B/s"), arch.core_groups,
             arch.core_groups == 1 ? "" : "s");
  fmt::print("ldm high-water: {} of {} per core\n", bytes_text(static_cast<double>(stats.ldm_high_water())),
             bytes_text(static_cast<double>(arch.ldm_bytes)));
  if (const std::uint64_t warnings = machine.lint_warnings(); warnings > 0) {
    fmt::print("lint warnings: {} DMA requests broke the {}-byte rule (see the trace), at these sites:\n", warnings,
               arch.dma.granularity_bytes);
    for (const LintSite& site : lint_sites(machine)) fmt::print("  {}\n", terminal_safe(format_lint_site(site)));
  }
  if (all_ok) {
    fmt::print("results verified ok: {} kernels, {} elements equal to the host reference bit for bit\n", kernels.size(),
               elements);
  } else {
    fmt::print("results WRONG: see the check column and {}\n", paths.stats().string());
  }
  fmt::print("wrote {}{}\n", paths.stats().string(), paths.trace().empty() ? "" : " and " + paths.trace().string());
}

/// The demo's input files: the arch file, when --arch names one.
std::vector<std::filesystem::path> arch_files(const std::string& arch) {
  std::error_code error;
  if (std::filesystem::is_regular_file(arch, error)) return {arch};
  return {};
}

MachineOptions machine_options(const RunOptions& options) {
  MachineOptions machine;
  machine.threads = options.threads;
  machine.trace = !options.no_trace;
  machine.trace_codec = *parse_trace_codec(options.trace_codec);  // CLI11 checked the name
  machine.trace_spill_dir = options.trace_spill_dir;
  machine.alignment = options.lint ? AlignmentPolicy::kLint : AlignmentPolicy::kTrap;
  machine.thread_stores = true;  // the demo and models run the operator library's kernels
  return machine;
}

void run_command(const RunOptions& options) {
  if (options.workloads.empty() && options.explain) {
    throw ConfigError("--explain shows the choices of a workload's ops: give a workload or model");
  }
  if (options.workloads.empty() && !options.model.inputs.empty()) {
    throw ConfigError(
        "--input gives a model's input values: give the model too (ldmsim run MODEL --input NAME=FILE.npy)");
  }
  if (options.workloads.empty() && options.concurrent) {
    throw ConfigError("--concurrent runs several models at once: give the workloads or models");
  }
  if (!options.workloads.empty() && (options.demo_fault || options.demo_race)) {
    throw ConfigError(fmt::format("{} changes the built-in demo: give no workload",
                                  options.demo_fault ? "--demo-fault" : "--demo-race"));
  }
  if (!options.model.split.place.empty() && (options.workloads.size() != 1 || options.concurrent)) {
    throw ConfigError("--place pins the ops of one model: give exactly one workload or model");
  }
  if (!options.layers_csv.empty() && (options.workloads.size() != 1 || options.concurrent)) {
    throw ConfigError("--layers-csv writes the layers of one workload or model: give exactly one");
  }
  if (!options.workloads.empty()) {
    const ModelRunArgs args{options.model,      machine_options(options), options.out,        options.trace,
                            options.dump_graph, options.explain,          options.layers_csv, options.progress};
    if (options.workloads.size() == 1 && !options.concurrent) {
      run_workload_command(options.workloads.front(), args);
    } else {
      run_models_command(options.workloads, options.concurrent, args);
    }
    return;
  }
  const CheckSet checks = parse_check_set(options.model.check, "--check");
  const Arch arch = resolve_arch(options.model.arch);
  Machine machine(arch, machine_options(options));
  if (checks.any()) enable_checks(machine, checks);
  const std::filesystem::path trace_option(options.trace);
  RunDirectory paths(options.out, options.no_trace ? nullptr : &trace_option, {},
                     {{"workload", "demo"}, {"arch", arch.name}}, arch_files(options.model.arch));

  std::vector<DemoKernelResult> kernels;
  try {
    run_demo(machine,
             DemoOptions{.inject_misaligned_dma = options.demo_fault, .inject_put_source_change = options.demo_race},
             kernels);
  } catch (const Fault& fault) {
    write_outputs(machine, options, paths, kernels, &fault);
    paths.complete();
    fmt::print(stderr, "ldmsim: the run trapped; wrote {}{} up to the fault\n", paths.stats().string(),
               paths.trace().empty() ? "" : " and " + paths.trace().string());
    throw;
  }
  write_outputs(machine, options, paths, kernels, nullptr);
  paths.complete();
  print_summary(machine, kernels, paths);
  for (const auto& k : kernels) {
    if (k.status != "ok") throw CommandFailed(fmt::format("demo kernel {}: {}", k.name, k.mismatch));
  }
  if (checks.any()) throw_if_check_reports({{"check", check_reports_json(check_reports(machine))}});
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand(
      "run", "Run a workload on the simulated machine; without one, the built-in demo (fp16 tile kernels)");
  run->add_option("workload", options->workloads,
                  "Workload JSON file (docs/workload-format.md) or ONNX model (docs/onnx.md), told apart by content; "
                  "several run on "
                  "one machine, each in its own context (one after another, or pipelined with --concurrent)");
  run->add_flag("--concurrent", options->concurrent,
                "Pipeline the models: each core switches to another model's ready work when its model stalls "
                "(docs/pipelining.md); writes OUT/NAME/ per model, OUT/stats.json and OUT/schedule.svg");
  run->add_option("--input", options->model.inputs,
                  "An ONNX model's input values: NAME=FILE.npy (repeatable; f32 is rounded to fp16)")
      ->allow_extra_args(false);  // one value per --input: a model path after it stays the model
  CLI::Option* arch =
      run->add_option("--arch", options->model.arch, "Arch preset name or arch JSON file")->capture_default_str();
  run->add_option("--staging", options->model.staging, "Workload staging policy: method (default), naive or none")
      ->check(CLI::IsMember({"method", "naive", "none"}));
  run->add_option("--out", options->out, "Output directory for stats.json and the trace")->capture_default_str();
  CLI::Option* trace = run->add_option("--trace", options->trace, "Trace file path (default: OUT/trace.ldmtrace)");
  CLI::Option* no_trace = run->add_flag("--no-trace", options->no_trace, "Record and write no trace")->excludes(trace);
  run->add_option("--trace-codec", options->trace_codec,
                  "Encoding of the trace's DMA blocks: zstd (compressed, default) or raw (plain columns)")
      ->check(CLI::IsMember({"zstd", "raw"}))
      ->capture_default_str()
      ->excludes(no_trace);
  run->add_option("--trace-spill-dir", options->trace_spill_dir,
                  "Directory for the trace's temporary spill files (default: TMPDIR or /tmp)")
      ->excludes(no_trace);
  run->add_option("--threads", options->threads,
                  "Host threads running core groups and pricing --split auto's placements (0: min(host cores, groups))")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
  run->add_option("--conv-algo", options->model.conv_algo,
                  "Convolution algorithm for every conv that does not set its own \"algo\" (docs/operators.md)")
      ->check(CLI::IsMember({"im2col", "direct", "implicit", "implicit-precomp", "depthwise"}));
  run->add_flag("--dump-graph", options->dump_graph,
                "Print the workload's graph after the passes (fusion groups, layouts, re-layouts, frees) before "
                "running it");
  run->add_flag("--explain", options->explain,
                "After a workload's run, print the choices ops made: each recurrent layer's EP/VP candidates with "
                "their simulated cycles per step, and the one chosen");
  run->add_option("--layers-csv", options->layers_csv,
                  "Also write one CSV row per layer: cycles, flops, DMA bytes local/remote, ldm high-water, "
                  "arithmetic intensity, achieved bandwidth and flop rate, roofline limit and fraction "
                  "(docs/workload-format.md)");
  run->add_option("--progress", options->progress,
                  "One line per finished layer on stderr, with the host time since the run began: auto (when "
                  "stderr is a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  run->add_option("--fusion", options->model.fusion,
                  "Fuse memory-intensive subgraphs into one kernel each (docs/fusion.md): on or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  add_split_flags(*run, options->model.split);
  run->add_option("--check", options->model.check,
                  "Checking mode: races,init,bounds (comma-separated), all or off; reports go to stats.json's "
                  "`check` and make the exit status 4 (docs/checking.md)")
      ->capture_default_str();
  run->add_flag("--lint", options->lint,
                "Lint policy: DMA alignment violations become recorded warnings instead of traps");
  run->add_flag("--demo-fault", options->demo_fault,
                "Testing aid: one demo kernel issues a misaligned DMA (traps, exit 3; under --lint: 2 warnings)")
      ->group("Testing aids");
  run->add_flag("--demo-race", options->demo_race,
                "Testing aid: one demo kernel changes a put's source before waiting for it (results stay right; "
                "under --check races: a put-source report, exit 4)")
      ->group("Testing aids");
  add_examples(run,
               "Examples:\n"
               "  ldmsim run                                     the built-in demo\n"
               "  ldmsim run examples/cnn_block.json --out cnn   a workload\n"
               "  ldmsim run models/tiny_cnn.onnx --input input=models/tiny_cnn_input.npy --layers-csv layers.csv\n"
               "  ldmsim run examples/pipeline/*.json --concurrent --out pipe");
  run->callback([options, arch, trace] {
    options->model.arch_given = arch->count() > 0;
    if (trace->count() > 0 && options->trace.empty()) {
      throw ConfigError("--trace: empty path (give a file name, or omit --trace for OUT/trace.ldmtrace)");
    }
    run_command(*options);
  });
}

}  // namespace ldmsim::cli
