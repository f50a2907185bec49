#include "ldmsim/session/run_config.hpp"

#include <fmt/format.h>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

SplitOptions split_for(const RunConfig& config, std::string_view format) {
  SplitOptions split = config.split;
  if (config.split_by_format) split.enabled = split.cost_aware = format == "onnx";
  return split;
}

Arch resolve_arch(const std::string& name_or_file) {
  Arch arch = Arch::resolve(name_or_file);
  try {
    (void)make_timing_model(arch);  // the model validates its own parameters (dma.timing.*)
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", name_or_file, e.what()));
  }
  return arch;
}

}  // namespace ldmsim
