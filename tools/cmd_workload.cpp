// `ldmsim run WORKLOAD.json`: loads and validates a workload, runs its operators on the simulated machine
// under a staging policy, writes every output as .npy plus stats.json (and the trace), one progress line per op.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "commands.hpp"
#include "layer_table.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/fusion.hpp"
#include "ldmsim/ldmsim.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "model_import.hpp"
#include "run_directory.hpp"
#include "workload_loading.hpp"

namespace ldmsim::cli {

namespace {
constexpr std::size_t kSlowestLayersShown = 5;
// What the import's helper commits of an ONNX run's machine: each core's first 64 KiB of local store (ResNet-18's
// cores touch 74 KiB on average; committing all 256 KiB cost more than it saved) and the first 8 MiB of device
// memory, where the first ops' weights and activations go (docs/benchmarks.md).
constexpr std::size_t kPrefaultLdmBytes = std::size_t{64} << 10;
constexpr std::uint64_t kPrefaultMainBytes = std::uint64_t{8} << 20;
}  // namespace

void run_workload_command(const WorkloadRunArgs& args) {
  const OperatorRegistry registry = OperatorRegistry::builtin();
  LoadArgs load_args{args.workload, args.arch, args.arch_given, args.staging, args.fusion, args.conv_algo, args.inputs};
  // An ONNX model runs on the command line's arch, so its machine can exist before the import: the import's helper
  // thread, idle once the heap is populated, commits the host memory the first launches touch meanwhile.
  std::optional<Machine> early_machine;
  if (is_onnx_model(args.workload)) {
    early_machine.emplace(Arch::resolve(args.arch), args.machine);
    load_args.while_importing = [&early_machine](const std::atomic<bool>& stop) {
      early_machine->prefault_host_memory(kPrefaultLdmBytes, kPrefaultMainBytes, stop);
    };
  }
  const std::unique_ptr<LoadedWorkload> prepared = load_for_run(load_args, registry);
  const ImportedModel& imported = prepared->imported;
  const std::optional<Graph>& loaded = prepared->loaded;
  const StagingPolicy policy = prepared->policy;
  const Arch& arch = prepared->arch;
  const std::optional<FusedGraph>& fused = prepared->fused;
  const Graph& workload = prepared->graph();
  const ExecutionPlan plan = plan_execution(workload, policy);
  check_runnable(workload, plan, arch);  // as `ldmsim plan` does, before anything is written
  check_host_memory(host_memory_bound(workload, plan), fmt::format("workload '{}'", workload.name));
  if (args.dump_graph) {
    if (fused) fmt::print("{}", terminal_safe(fused->describe(*loaded)));
    fmt::print("{}", terminal_safe(describe(workload, plan)));
  }
  if (early_machine && !(early_machine->arch() == arch)) early_machine.reset();  // not the arch that runs
  std::optional<Machine> late_machine;
  Machine& machine = early_machine ? *early_machine : late_machine.emplace(arch, args.machine);
  std::vector<std::string> outputs;
  for (std::size_t t : workload.outputs()) outputs.push_back(workload.tensor(t).name);
  const std::filesystem::path trace_option(args.trace);
  const nlohmann::json run_info = {{"workload", workload.name}, {"staging", std::string(to_string(policy))}};
  RunDirectory dir(args.out, args.machine.trace ? &trace_option : nullptr, outputs, run_info, prepared->inputs);
  ExecuteOptions options;
  options.staging = policy;
  options.split = args.split;
  if (isatty(fileno(stderr))) {
    options.progress = [&](const OpNode&, const nlohmann::json& op) {
      fmt::print(stderr, "{}\n", terminal_safe(layer_progress_line(op, workload.ops().size())));
    };
  }
  ExecutionResult result;
  HostStopwatch phase_clock;
  try {
    result = execute(workload, plan, machine, options);
  } catch (const Fault& fault) {
    // A trapped run leaves a consistent set: stats.json and the trace, both recording the fault, and none of
    // this workload's .npy outputs (an earlier run's would look like results).
    nlohmann::json stats = machine.stats().to_json();
    stats["tool_version"] = LDMSIM_VERSION;
    stats["workload"] = workload.name;
    stats["fault"] = fault_json(fault);
    dir.remove_stale_outputs(outputs);
    write_file_atomically(dir.stats(), stats.dump(2) + "\n", "stats file");
    if (!dir.trace().empty()) machine.write_trace(dir.trace(), {{"run", run_info}, {"fault", fault_json(fault)}});
    dir.complete();
    throw;
  }
  nlohmann::json phases = prepared->host_phases;
  phases["execute_seconds"] = phase_clock.lap();
  result.stats["tool_version"] = LDMSIM_VERSION;
  result.stats["fusion"] = {
      {"enabled", args.fusion},
      {"groups", fused ? fused->groups.size() : 0},
      {"fused_kernels", fused ? std::count_if(fused->groups.begin(), fused->groups.end(),
                                              [](const FusionGroup& g) { return g.mapping.has_value(); })
                              : 0},
      {"activation_folds", fused ? fused->activation_folds() : 0},
      {"residual_folds", fused ? fused->residual_folds() : 0},
      {"ops_before", loaded->ops().size()}};
  if (is_onnx_model(args.workload)) result.stats["import_notes"] = imported.notes;
  for (const auto& [name, values] : result.outputs) {
    write_npy(dir.npy(name), result.shapes.at(name).dims_vector(), values);
  }
  write_file_atomically(dir.stats(), result.stats.dump(2) + "\n", "stats file");
  phases["write_outputs_seconds"] = phase_clock.lap();
  result.host_times["phases"] = std::move(phases);
  write_file_atomically(dir.host_times(), result.host_times.dump(2) + "\n", "host times file");
  if (!dir.trace().empty()) machine.write_trace(dir.trace(), {{"run", run_info}, {"fault", nullptr}});
  dir.complete();
  fmt::print("{}: {} ops on {} (staging {}): {} cycles = {:.4g} us simulated, {} DMA bytes, padding +{} bytes\n",
             terminal_safe(workload.name), workload.ops().size(), machine.arch().name, to_string(policy),
             result.stats["cycles"].get<std::uint64_t>(), result.stats["seconds"].get<double>() * 1e6,
             result.stats["dma_bytes"].get<std::uint64_t>(),
             result.stats["padding"]["bytes_added"].get<std::uint64_t>());
  fmt::print("{}", terminal_safe(slowest_layers_table(result.stats, kSlowestLayersShown)));
  if (args.explain) fmt::print("{}", terminal_safe(op_choices_text(result.stats)));
  fmt::print("wrote {} output(s), {}{}\n", result.outputs.size(), dir.stats().string(),
             dir.trace().empty() ? "" : " and " + dir.trace().string());
}

}  // namespace ldmsim::cli
