#include "model_flags.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

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
  config.check = parse_check_set(check, "--check");
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

std::size_t print_check_reports(const nlohmann::json& stats, std::string_view model) {
  const auto it = stats.find("check");
  if (it == stats.end() || it->empty()) return 0;
  const std::string prefix = model.empty() ? std::string() : fmt::format("model {}: ", terminal_safe(model));
  for (const auto& r : *it) {
    fmt::print(stderr, "ldmsim: {}check {} ({} time{}): kernel {}, core group {}, core {}, cycle {}: {}\n", prefix,
               r["kind"].get<std::string>(), r["count"].get<std::uint64_t>(), r["count"] == 1 ? "" : "s",
               terminal_safe(r["kernel"].get<std::string>()), r["cg"].get<int>(), r["core"].get<int>(),
               r["cycle"].get<std::uint64_t>(), terminal_safe(r["message"].get<std::string>()));
  }
  return it->size();
}

void throw_if_check_reports(const nlohmann::json& stats) {
  if (const std::size_t sites = print_check_reports(stats, {}); sites > 0) throw_check_reported(sites);
}

void throw_check_reported(std::size_t sites) {
  throw CheckReported(fmt::format("checking reported {} site(s) (see stats.json's `check`)", sites));
}

void print_notes(const Model& model) {
  for (const std::string& note : model.notes()) fmt::print(stderr, "ldmsim: note: {}\n", terminal_safe(note));
}

unsigned machine_threads(const MachineOptions& machine, const Arch& arch) {
  const unsigned requested = machine.threads > 0 ? machine.threads : std::max(1U, std::thread::hardware_concurrency());
  return std::min(requested, arch.core_groups);
}

}  // namespace ldmsim::cli
