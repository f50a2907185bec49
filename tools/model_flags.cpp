#include "model_flags.hpp"

#include <fmt/format.h>

#include "ldmsim/sim/utf8.hpp"

namespace ldmsim::cli {

RunConfig ModelFlags::config(const MachineOptions& machine) const {
  RunConfig config;
  if (arch_given) config.arch = arch;
  if (!staging.empty()) config.staging = parse_staging_policy(staging);
  config.fusion = fusion == "on";
  config.split = split.options();
  config.split_by_format = split.split.empty();
  config.conv_algo = conv_algo;
  config.machine = machine;
  return config;
}

ModelReadOptions ModelFlags::read_options() const {
  ModelReadOptions options;
  options.input_files = input_files(inputs);
  return options;
}

std::map<std::string, std::filesystem::path> input_files(const std::vector<std::string>& inputs) {
  std::map<std::string, std::filesystem::path> files;
  for (const std::string& given : inputs) {
    const auto eq = given.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == given.size()) {
      throw ConfigError(fmt::format("--input {}: expected NAME=FILE.npy", given));
    }
    const std::string name = given.substr(0, eq);
    if (!files.emplace(name, given.substr(eq + 1)).second) {
      throw ConfigError(fmt::format("--input {}: input '{}' is given twice", given, name));
    }
  }
  return files;
}

void print_notes(const Model& model) {
  for (const std::string& note : model.notes()) fmt::print(stderr, "ldmsim: note: {}\n", terminal_safe(note));
}

}  // namespace ldmsim::cli
