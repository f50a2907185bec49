// `ldmsim run MODEL`: loads a workload JSON or ONNX model through a Session, runs it and writes every output as
// .npy plus stats.json and the trace (the session's run directory), one progress line per op on a terminal.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "layer_table.hpp"
#include "ldmsim/graph/placement_choice.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "model_flags.hpp"

namespace ldmsim::cli {

namespace {
constexpr std::size_t kSlowestLayersShown = 5;
}  // namespace

void run_workload_command(const std::string& workload, const ModelRunArgs& args) {
  Session session(args.model.config(args.machine));
  const Model model = session.load(workload, args.model.read_options());
  print_notes(model);
  if (args.dump_graph) {
    fmt::print("{}", terminal_safe(model.describe()));
    const SplitOptions split = split_for(args.model.config(args.machine), model.format());
    if (split.cost_aware)
      fmt::print("{}",
                 terminal_safe(describe_placements(model.graph(), plan_split(model.graph(), model.arch(), split))));
  }
  RunRequest request;
  request.outputs = RunOutputs{args.out, args.trace};
  const std::size_t op_count = model.graph().ops().size();
  if (isatty(fileno(stderr))) {
    request.progress = [op_count](const OpNode&, const nlohmann::json& op) {
      fmt::print(stderr, "{}\n", terminal_safe(layer_progress_line(op, op_count)));
    };
  }
  const RunResult result = session.run(model, request);
  fmt::print("{}: {} ops on {} (staging {}): {} cycles = {:.4g} us simulated, {} DMA bytes, padding +{} bytes\n",
             terminal_safe(model.name()), op_count, model.arch().name, to_string(model.staging()), result.cycles(),
             result.stats["seconds"].get<double>() * 1e6, result.stats["dma_bytes"].get<std::uint64_t>(),
             result.stats["padding"]["bytes_added"].get<std::uint64_t>());
  fmt::print("{}", terminal_safe(slowest_layers_table(result.stats, kSlowestLayersShown)));
  if (args.explain) fmt::print("{}", terminal_safe(op_choices_text(result.stats)));
  const RunOutputs& written = *result.written;
  fmt::print("wrote {} output(s), {}{}\n", result.outputs.size(), (written.dir / "stats.json").string(),
             written.trace.empty() ? "" : " and " + written.trace.string());
}

}  // namespace ldmsim::cli
