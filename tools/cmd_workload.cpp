// `ldmsim run MODEL`: loads a workload JSON or ONNX model through a Session, runs it and writes every output as
// .npy plus stats.json and the trace (the session's run directory), one progress line per op (on a terminal, or
// as --progress says).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "layer_table.hpp"
#include "layers_csv.hpp"
#include "ldmsim/graph/placement_choice.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "ldmsim/trace_analysis/units_text.hpp"
#include "model_flags.hpp"
#include "process_exit.hpp"

namespace ldmsim::cli {

namespace {
constexpr std::size_t kSlowestLayersShown = 5;

/// ConfigError unless the --layers-csv path is none of the files the run reads (the model, its .npy and arch files)
/// or writes (stats.json, host_times.json, the trace, the outputs), whether or not they exist yet.
void check_layers_csv_path(const std::filesystem::path& csv, const Model& model, const ModelRunArgs& args) {
  check_not_input(csv, model.files_read(), "--layers-csv file");
  const std::filesystem::path out(args.out);
  std::vector<std::filesystem::path> written = {
      out / "stats.json", out / "host_times.json",
      args.trace.empty() ? out / "trace.ldmtrace" : std::filesystem::path(args.trace)};
  for (const TensorInfo& output : model.outputs()) written.push_back(out / (output.name + ".npy"));
  const std::filesystem::path target = std::filesystem::weakly_canonical(csv);
  for (const std::filesystem::path& file : written) {
    if (std::filesystem::weakly_canonical(file) == target) {
      throw ConfigError(
          fmt::format("--layers-csv {}: the run writes that file itself; choose another path", csv.string()));
    }
  }
}

}  // namespace

void run_workload_command(const std::string& workload, const ModelRunArgs& args) {
  const HostStopwatch clock;
  if (!args.layers_csv.empty()) check_output_target(args.layers_csv, "--layers-csv file");
  // Both live until the process exits, and are not torn down there (process_exit.hpp).
  const auto kept_session = std::make_shared<Session>(args.model.config(args.machine));
  keep_until_exit(kept_session);
  Session& session = *kept_session;
  const auto kept_model = std::make_shared<const Model>(session.load(workload, args.model.read_options()));
  keep_until_exit(kept_model);
  const Model& model = *kept_model;
  if (!args.layers_csv.empty()) check_layers_csv_path(args.layers_csv, model, args);
  print_notes(model);
  if (args.dump_graph) {
    fmt::print("{}", terminal_safe(model.describe()));
    const SplitOptions split = split_for(args.model.config(args.machine), model.format());
    // Priced on as many host threads as the run's machine gets (the plan is the same on any number).
    if (split.cost_aware)
      fmt::print("{}", terminal_safe(describe_placements(
                           model.graph(), plan_split(model.graph(), model.arch(), split, &model.plan(), nullptr,
                                                     machine_threads(args.machine, model.arch())))));
  }
  RunRequest request;
  request.outputs = RunOutputs{args.out, args.trace};
  const std::size_t op_count = model.graph().ops().size();
  if (args.progress == "always" || (args.progress == "auto" && isatty(fileno(stderr)))) {
    request.progress = [op_count, &clock](const OpNode&, const nlohmann::json& op) {
      fmt::print(stderr, "{}\n", terminal_safe(layer_progress_line(op, op_count, clock.elapsed())));
    };
  }
  const RunResult result = session.run(model, request);
  fmt::print("{}: {} ops on {} (staging {}): {} cycles = {} simulated, {} DMA, padding +{}\n",
             terminal_safe(model.name()), op_count, model.arch().name, to_string(model.staging()), result.cycles(),
             seconds_text(result.stats["seconds"].get<double>()),
             bytes_text(static_cast<double>(result.stats["dma_bytes"].get<std::uint64_t>())),
             bytes_text(static_cast<double>(result.stats["padding"]["bytes_added"].get<std::uint64_t>())));
  fmt::print("{}", terminal_safe(slowest_layers_table(result.stats, kSlowestLayersShown)));
  if (args.explain) fmt::print("{}", terminal_safe(op_choices_text(result.stats)));
  if (!args.layers_csv.empty()) {
    write_file_atomically(args.layers_csv, layers_csv(result.stats), "--layers-csv file");
    fmt::print("wrote {}\n", args.layers_csv);
  }
  const RunOutputs& written = *result.written;
  fmt::print("wrote {} output(s), {}{}\n", result.outputs.size(), (written.dir / "stats.json").string(),
             written.trace.empty() ? "" : " and " + written.trace.string());
  throw_if_check_reports(result.stats);
}

}  // namespace ldmsim::cli
