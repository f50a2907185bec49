// `ldmsim arch list` (the presets with a one-line summary) and `ldmsim arch show NAME|FILE` (the resolved,
// validated arch config as JSON, including a check of the DMA timing model's parameters).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "commands.hpp"
#include "ldmsim/session/run_config.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/bytes_text.hpp"

namespace ldmsim::cli {

std::string arch_summary(const Arch& arch) {
  return fmt::format("{} core group{} x {}x{} cores, {} ldm, {:g} GHz, {} main memory per group, dma timing {}",
                     arch.core_groups, arch.core_groups == 1 ? "" : "s", arch.rows, arch.cols,
                     bytes_text(static_cast<double>(arch.ldm_bytes)), arch.clock_hz / 1e9,
                     bytes_text(static_cast<double>(arch.main_memory_bytes_per_cg)), arch.dma.timing_model());
}

namespace {

void list_presets() {
  for (const std::string& name : Arch::preset_names()) {
    fmt::print("{:<12} {}\n", name, arch_summary(Arch::preset(name)));
  }
}

void show_arch(const std::string& name_or_file) {
  fmt::print("{}\n", resolve_arch(name_or_file).to_json().dump(2));
}

}  // namespace

void add_arch_command(CLI::App& app) {
  CLI::App* arch = app.add_subcommand("arch", "List the architecture presets or show a resolved arch config");
  arch->require_subcommand(1);

  CLI::App* list = arch->add_subcommand("list", "List the built-in presets with a one-line summary");
  list->callback(list_presets);
  add_examples(list, "Example: ldmsim arch list");

  CLI::App* show = arch->add_subcommand(
      "show", "Print the resolved arch config (every default filled in) as JSON, after validating it");
  auto name = std::make_shared<std::string>();
  show->add_option("arch", *name, "A preset name (see `ldmsim arch list`) or a path to an arch JSON file")->required();
  show->callback([name] { show_arch(*name); });
  add_examples(show, "Example: ldmsim arch show sw26010pro");
  // After the subcommands: they inherit the footer as it is when they are added.
  add_examples(arch, "Examples:\n  ldmsim arch list\n  ldmsim arch show sw26010 > mine.json");
}

}  // namespace ldmsim::cli
