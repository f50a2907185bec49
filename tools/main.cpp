// ldmsim: run workloads on a simulated local-store many-core machine, inspect its architecture and traces.
// Exit codes: 0 ok, 1 wrong results, 2 bad usage or input, 3 trapped fault, 4 checking mode found bugs
// (docs/user-guide.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

#include "command_words.hpp"
#include "commands.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/logging.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "process_exit.hpp"

namespace {

/// After always_capture_default: an empty list or value says nothing ("=[]"), so its help shows no default.
void hide_empty_defaults(CLI::App& app) {
  for (CLI::Option* option : app.get_options([](const CLI::Option*) { return true; })) {
    if (option->get_default_str() == "[]") option->default_str("");
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) hide_empty_defaults(*sub);
}

/// The command line's work; main() exits with its code.
int run_command_line(int argc, char** argv) {
  CLI::App app{"ldmsim: a simulated Sunway-like local-store many-core processor and its runtime"};
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // every --help shows each option's default
  app.fallthrough();                                // inherited by the subcommands: -v / -q work before or after them
  app.set_version_flag("--version", std::string("ldmsim ") + LDMSIM_VERSION);
  app.footer(
      "Exit codes: 0 ok, 1 results wrong, 2 bad usage or input, 3 trapped fault, 4 checking mode found bugs.\n"
      "Logging: SPDLOG_LEVEL (e.g. SPDLOG_LEVEL=debug or SPDLOG_LEVEL=ldmsim.dma=trace); -v/-q override it.");
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "More log output (-v info, -vv debug, -vvv trace)");
  app.add_flag("-q,--quiet", quiet, "Only errors");
  app.parse_complete_callback([&] {
    if (quiet) {
      ldmsim::set_log_level(spdlog::level::err);
    } else if (verbosity > 0) {
      ldmsim::set_log_level(verbosity >= 3   ? spdlog::level::trace
                            : verbosity == 2 ? spdlog::level::debug
                                             : spdlog::level::info);
    }
  });
  ldmsim::cli::add_arch_command(app);
  ldmsim::cli::add_run_command(app);
  ldmsim::cli::add_bench_command(app);
  ldmsim::cli::add_pad_command(app);
  ldmsim::cli::add_trace_command(app);
  ldmsim::cli::add_report_command(app);
  ldmsim::cli::add_import_command(app);
  ldmsim::cli::add_plan_command(app);
  ldmsim::cli::add_compare_command(app);
  hide_empty_defaults(app);
  // A mistyped command word: named, with the nearest command (CLI11 alone says "A subcommand is required").
  if (const auto error = ldmsim::cli::unknown_command_error(app, argc, argv)) {
    std::cerr << "ldmsim: error: " << ldmsim::terminal_safe(*error) << '\n';
    return ldmsim::cli::kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? ldmsim::cli::kExitOk : ldmsim::cli::kExitBadInput;  // --help
    // Usage errors read like every other error: prefixed, one line, with where to look.
    std::cerr << "ldmsim: error: " << ldmsim::terminal_safe(e.what())
              << " (see ldmsim --help, or ldmsim COMMAND --help)\n";
    return ldmsim::cli::kExitBadInput;
  } catch (const ldmsim::Fault& fault) {
    std::cerr << "ldmsim: " << ldmsim::terminal_safe(fault.what()) << '\n';
    return ldmsim::cli::kExitFault;
  } catch (const ldmsim::ConfigError& e) {
    std::cerr << "ldmsim: error: " << ldmsim::terminal_safe(e.what()) << '\n';
    return ldmsim::cli::kExitBadInput;
  } catch (const ldmsim::cli::CheckReported& e) {
    std::cerr << "ldmsim: " << ldmsim::terminal_safe(e.what()) << '\n';
    return ldmsim::cli::kExitChecked;
  } catch (const ldmsim::cli::CommandFailed& e) {
    std::cerr << "ldmsim: failed: " << ldmsim::terminal_safe(e.what()) << '\n';
    return ldmsim::cli::kExitFailed;
  } catch (const std::bad_alloc&) {
    std::cerr << "ldmsim: error: out of host memory (see LDMSIM_HOST_MEMORY_BYTES in docs/user-guide.md)\n";
    return ldmsim::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ldmsim: error: " << ldmsim::terminal_safe(e.what()) << '\n';
    return ldmsim::cli::kExitBadInput;
  }
  return ldmsim::cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  ldmsim::cli::exit_without_teardown(run_command_line(argc, argv));
}
