// Loading a workload for `run` and `plan` (see workload_loading.hpp).
#include "workload_loading.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <fstream>

#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/runtime/concurrent.hpp"
#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"
#include "ldmsim/sim/utf8.hpp"

namespace ldmsim::cli {

std::vector<std::filesystem::path> option_inputs(const std::vector<std::string>& inputs, const std::string& arch) {
  std::vector<std::filesystem::path> files;
  for (const std::string& given : inputs) {
    if (const auto eq = given.find('='); eq != std::string::npos) files.emplace_back(given.substr(eq + 1));
  }
  std::error_code error;
  if (!arch.empty() && std::filesystem::is_regular_file(arch, error)) files.emplace_back(arch);
  return files;
}

namespace {
/// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::uint64_t host_memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}
}  // namespace

void check_host_memory(std::uint64_t bytes, const std::string& what) {
  std::uint64_t limit = host_memory_available();
  std::string source = "available on this host (MemAvailable)";
  if (const char* given = std::getenv("LDMSIM_HOST_MEMORY_BYTES"); given != nullptr && *given != '\0') {
    const std::string text = given;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc{} || end != text.data() + text.size()) {
      throw ConfigError("LDMSIM_HOST_MEMORY_BYTES=" + valid_utf8(text) + " is not a byte count");
    }
    source = "allowed by LDMSIM_HOST_MEMORY_BYTES";
  }
  if (limit != 0 && bytes > limit) {
    throw ConfigError(
        fmt::format("{} needs up to {} of host memory for its tensors (simulated memory at its peak "
                    "plus host copies of its inputs and outputs), more than the {} {}",
                    what, bytes_text(static_cast<double>(bytes)), bytes_text(static_cast<double>(limit)), source));
  }
}

std::unique_ptr<LoadedWorkload> load_for_run(const LoadArgs& args, const OperatorRegistry& registry) {
  auto w = std::make_unique<LoadedWorkload>();
  w->inputs = option_inputs(args.inputs, args.arch);
  w->inputs.emplace_back(args.workload);
  WorkloadLoadOptions load;
  load.files_read = &w->inputs;
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
  if (std::error_code error; std::filesystem::is_regular_file(arch_name, error)) w->inputs.emplace_back(arch_name);
  if (args.fusion) {
    Arch context = w->arch;
    context.ldm_bytes = ConcurrentMachine::ldm_share(w->arch, args.contexts);
    w->fused.emplace(fuse(*w->loaded, context, w->policy));
    w->host_phases["fusion_seconds"] = phase_clock.lap();
  }
  return w;
}

}  // namespace ldmsim::cli
