// Loading a workload for `run` and `plan` (see workload_loading.hpp).
#include "workload_loading.hpp"

#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/runtime/concurrent.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"

namespace ldmsim::cli {

std::unique_ptr<LoadedWorkload> load_for_run(const LoadArgs& args, const OperatorRegistry& registry) {
  auto w = std::make_unique<LoadedWorkload>();
  WorkloadLoadOptions load;
  if (!args.conv_algo.empty()) load.default_attrs["conv"] = {{"algo", args.conv_algo}};
  if (!args.inputs.empty() && !is_onnx_model(args.workload)) {
    throw ConfigError("--input gives an ONNX model's inputs; a workload JSON declares its own");
  }
  HostStopwatch phase_clock;
  if (is_onnx_model(args.workload)) {
    w->imported = import_model(args.workload, args.inputs, args.while_importing);
    w->host_phases["import_seconds"] = phase_clock.lap();
    load.arrays = &w->imported.arrays;
    w->loaded.emplace(workload_from_json(w->imported.workload, args.workload, ".", registry,
                                         w->imported.workload["name"].get<std::string>(), load));
  } else {
    w->loaded.emplace(load_workload(args.workload, registry, load));
  }
  w->host_phases["load_seconds"] = phase_clock.lap();
  const std::string arch_name = args.arch_given || !w->loaded->arch ? args.arch : *w->loaded->arch;
  w->policy = !args.staging.empty() ? parse_staging_policy(args.staging)
              : w->loaded->staging  ? *w->loaded->staging
                                    : StagingPolicy::kMethod;
  w->arch = Arch::resolve(arch_name);
  if (args.fusion) {
    Arch context = w->arch;
    context.ldm_bytes = ConcurrentMachine::ldm_share(w->arch, args.contexts);
    w->fused.emplace(fuse(*w->loaded, context, w->policy));
    w->host_phases["fusion_seconds"] = phase_clock.lap();
  }
  return w;
}

}  // namespace ldmsim::cli
