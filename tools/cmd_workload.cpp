// `ldmsim run WORKLOAD.json`: loads and validates a workload, runs its operators on the simulated machine
// under a staging policy, writes every output as .npy plus stats.json (and the trace), one progress line per op.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.hpp"
#include "ldmsim/kernels/operators.hpp"
#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/npy.hpp"
#include "ldmsim/runtime/workload.hpp"

namespace ldmsim::cli {

void run_workload_command(const WorkloadRunArgs& args) {
  kernels::register_builtin_operators(operator_registry());
  const Workload workload = Workload::load(args.workload, operator_registry());
  const std::string arch_name = args.arch_given || !workload.arch ? args.arch : *workload.arch;
  const StagingPolicy policy = !args.staging.empty() ? parse_staging_policy(args.staging)
                               : workload.staging    ? *workload.staging
                                                     : StagingPolicy::kMethod;
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
      fmt::print(stderr, "[{}/{}] {} done, {:.4g} us simulated\n", i + 1, workload.ops.size(), type, seconds * 1e6);
    };
  }
  WorkloadResult result;
  try {
    result = execute(workload, machine, operator_registry(), options);
  } catch (const Fault& fault) {
    if (!trace.empty()) {
      machine.write_trace(trace, {{"run", {{"workload", workload.name}, {"staging", std::string(to_string(policy))}}}});
    }
    throw;
  }
  result.stats["tool_version"] = LDMSIM_VERSION;
  for (const auto& [name, values] : result.outputs) {
    write_npy(dir / (name + ".npy"), result.shapes.at(name).dims(), values);
  }
  std::ofstream(dir / "stats.json") << result.stats.dump(2) << '\n';
  if (!trace.empty()) {
    machine.write_trace(trace, {{"run", {{"workload", workload.name}, {"staging", std::string(to_string(policy))}}}});
  }
  fmt::print("{}: {} ops on {} (staging {}): {} cycles = {:.4g} us simulated, {} DMA bytes, padding +{} bytes\n",
             workload.name, workload.ops.size(), machine.arch().name, to_string(policy),
             result.stats["cycles"].get<std::uint64_t>(), result.stats["seconds"].get<double>() * 1e6,
             result.stats["dma_bytes"].get<std::uint64_t>(),
             result.stats["padding"]["bytes_added"].get<std::uint64_t>());
  fmt::print("wrote {} output(s), {}{}\n", result.outputs.size(), (dir / "stats.json").string(),
             trace.empty() ? "" : " and " + trace.string());
}

}  // namespace ldmsim::cli
