// `ldmsim run A B ... [--concurrent]`: several models (workload JSON or ONNX files) on one machine, each in its own
// context (docs/pipelining.md), through Session::run_together. Sequential by default, pipelined with --concurrent.
#include <fmt/format.h>

#include <exception>

#include "layer_table.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "ldmsim/trace_analysis/units_text.hpp"
#include "model_flags.hpp"

namespace ldmsim::cli {

void run_models_command(const std::vector<std::string>& workloads, bool pipelined, const ModelRunArgs& args) {
  if (!args.model.inputs.empty() && workloads.size() > 1) {
    throw ConfigError(
        "--input gives one ONNX model's inputs; with several models, run each model's inputs from its "
        "own workload, or run the models one at a time");
  }
  Session session(args.model.config(args.machine));
  std::vector<Model> models;
  models.reserve(workloads.size());
  for (const std::string& workload : workloads) {
    models.push_back(session.load(workload, args.model.read_options(), workloads.size()));
    print_notes(models.back());
  }
  std::vector<const Model*> order;
  for (const Model& m : models) order.push_back(&m);
  if (args.dump_graph) {
    for (const Model& m : models) fmt::print("{}:\n{}", terminal_safe(m.name()), terminal_safe(m.describe()));
  }
  const TogetherResult together = session.run_together(
      order, pipelined ? ContextSchedule::kPipelined : ContextSchedule::kSequential, RunOutputs{args.out, args.trace});

  const ConcurrentStats& stats = together.stats;
  const Arch& arch = models.front().arch();
  Cycle cores = 0;
  for (const auto& group : stats.groups) cores += group.size();
  const double idle_share = stats.makespan == 0 ? 0.0
                                                : 100.0 * static_cast<double>(stats.idle_core_cycles()) /
                                                      static_cast<double>(stats.makespan * cores);
  fmt::print(
      "{} models on {}, {}: {} cycles = {} simulated; busy {} core-cycles, idle {} ({:.1f}%), {} "
      "context switches ({} cycles)\n",
      models.size(), arch.name, pipelined ? "pipelined" : "sequential", stats.makespan,
      seconds_text(static_cast<double>(stats.makespan) / arch.clock_hz), stats.busy_cycles(), stats.idle_core_cycles(),
      idle_share, stats.switches(), stats.switch_cycles());
  fmt::print("  {:<24} {:>12} {:>12} {:>12}  {}\n", "model", "start", "end", "cycles", "status");
  for (const auto& m : together.summary["models"]) {
    fmt::print("  {:<24} {:>12} {:>12} {:>12}  {}\n", m["name"].get<std::string>(), m["start_cycle"].get<Cycle>(),
               m["end_cycle"].get<Cycle>(), m["cycles"].get<Cycle>(), m["status"].get<std::string>());
  }
  if (args.explain) {
    for (std::size_t k = 0; k < models.size(); ++k) {
      if (!together.errors[k]) fmt::print("{}", terminal_safe(op_choices_text(together.results[k].stats)));
    }
  }
  const std::filesystem::path out(args.out);
  const std::string trace = !args.machine.trace  ? std::string()
                            : args.trace.empty() ? (out / "trace.ldmtrace").string()
                                                 : args.trace;
  fmt::print("wrote {}, {}{} and each model's outputs in {}/NAME/\n", (out / "stats.json").string(),
             (out / "schedule.svg").string(), trace.empty() ? "" : ", " + trace, out.string());
  for (std::size_t k = 0; k < models.size(); ++k) {
    if (!together.errors[k]) continue;
    std::string text = "an exception that is not a std::exception";
    try {
      std::rethrow_exception(together.errors[k]);
    } catch (const std::exception& e) {
      text = e.what();
    } catch (...) {
    }
    for (std::size_t j = 0; j < models.size(); ++j) print_check_reports(together.results[j].stats, together.names[j]);
    fmt::print(stderr, "ldmsim: model {} failed: {}\n", together.names[k], terminal_safe(text));
    std::rethrow_exception(together.errors[k]);  // a failure takes precedence over checking reports
  }
  std::size_t sites = 0;
  for (std::size_t k = 0; k < models.size(); ++k) {
    sites += print_check_reports(together.results[k].stats, together.names[k]);
  }
  if (sites > 0) throw_check_reported(sites);
}

}  // namespace ldmsim::cli
