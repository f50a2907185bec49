// `ldmsim run WORKLOAD.json`: loads and validates a workload, runs its operators on the simulated machine
// under a staging policy, writes every output as .npy plus stats.json (and the trace), one progress line per op.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/ldmsim.hpp"

namespace ldmsim::cli {

void run_workload_command(const WorkloadRunArgs& args) {
  const OperatorRegistry registry = OperatorRegistry::builtin();
  WorkloadLoadOptions load;
  if (!args.conv_algo.empty()) load.default_attrs["conv"] = {{"algo", args.conv_algo}};
  const Graph workload = load_workload(args.workload, registry, load);
  const std::string arch_name = args.arch_given || !workload.arch ? args.arch : *workload.arch;
  const StagingPolicy policy = !args.staging.empty() ? parse_staging_policy(args.staging)
                               : workload.staging    ? *workload.staging
                                                     : StagingPolicy::kMethod;
  const ExecutionPlan plan = plan_execution(workload, policy);
  if (args.dump_graph) fmt::print("{}", describe(workload, plan));
  Machine machine(Arch::resolve(arch_name), args.machine);
  const std::filesystem::path dir(args.out);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir)) throw ConfigError(fmt::format("--out {}: cannot create", args.out));
  const std::filesystem::path trace = !args.machine.trace  ? std::filesystem::path()
                                      : args.trace.empty() ? dir / "trace.ldmtrace"
                                                           : std::filesystem::path(args.trace);
  ExecuteOptions options;
  options.staging = policy;
  if (isatty(fileno(stderr))) {
    options.progress = [&](std::size_t i, const std::string& type, double seconds) {
      fmt::print(stderr, "[{}/{}] {} done, {:.4g} us simulated\n", i + 1, workload.ops().size(), type, seconds * 1e6);
    };
  }
  ExecutionResult result;
  try {
    result = execute(workload, plan, machine, options);
  } catch (const Fault& fault) {
    if (!trace.empty()) {
      machine.write_trace(trace, {{"run", {{"workload", workload.name}, {"staging", std::string(to_string(policy))}}}});
    }
    throw;
  }
  result.stats["tool_version"] = LDMSIM_VERSION;
  for (const auto& [name, values] : result.outputs) {
    write_npy(dir / (name + ".npy"), result.shapes.at(name).dims_vector(), values);
  }
  std::ofstream(dir / "stats.json") << result.stats.dump(2) << '\n';
  if (!trace.empty()) {
    machine.write_trace(trace, {{"run", {{"workload", workload.name}, {"staging", std::string(to_string(policy))}}}});
  }
  fmt::print("{}: {} ops on {} (staging {}): {} cycles = {:.4g} us simulated, {} DMA bytes, padding +{} bytes\n",
             workload.name, workload.ops().size(), machine.arch().name, to_string(policy),
             result.stats["cycles"].get<std::uint64_t>(), result.stats["seconds"].get<double>() * 1e6,
             result.stats["dma_bytes"].get<std::uint64_t>(),
             result.stats["padding"]["bytes_added"].get<std::uint64_t>());
  fmt::print("wrote {} output(s), {}{}\n", result.outputs.size(), (dir / "stats.json").string(),
             trace.empty() ? "" : " and " + trace.string());
}

}  // namespace ldmsim::cli
