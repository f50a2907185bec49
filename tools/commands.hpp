// The ldmsim CLI's subcommands. Each lives in its own file and registers itself on the app; its callback
// throws ldmsim::ConfigError for bad input (exit 2) and lets ldmsim::Fault escape for traps (exit 3).
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/graph/split.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim::cli {

/// Exit codes, documented in docs/user-guide.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  ///< the run finished but its results are wrong (a simulator bug)
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitFault = 3;
inline constexpr int kExitChecked = 4;  ///< the run completed, and checking mode (--check) reported bugs

/// Puts `examples` ("Example: ..." or "Examples:" and one indented command a line) at the end of a command's
/// --help, before the footer it inherited (exit codes, logging).
inline void add_examples(CLI::App* command, const std::string& examples) {
  command->footer(examples + "\n\n" + command->get_footer());
}

/// Check of an unsigned option: CLI11 would wrap "-8" to 2^64 - 8; refuse it with a plain message instead.
inline CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& value) {
        return !value.empty() && value.front() == '-' ? "must be a non-negative integer, got " + value : std::string();
      },
      "UINT");
}

/// Check of an unsigned option of type T: refuses what T cannot hold (2^64 for a uint64, which CLI11 would clamp)
/// and anything but decimal digits, naming the value.
template <typename T>
CLI::Validator fits_unsigned() {
  return CLI::Validator(
      [](std::string& value) {
        T parsed{};
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        if (ec == std::errc::result_out_of_range) {
          return value + " is too large (at most " + std::to_string(std::numeric_limits<T>::max()) + ")";
        }
        if (ec != std::errc{} || end != value.data() + value.size()) {
          return "must be a non-negative integer, got " + value;
        }
        return std::string();
      },
      "UINT");
}

/// Thrown by a command whose run completed with wrong results; main maps it to kExitFailed.
class CommandFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by a run whose checking mode (--check) reported bugs; main maps it to kExitChecked.
class CheckReported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void add_arch_command(CLI::App& app);     // arch list | arch show NAME|FILE
void add_run_command(CLI::App& app);      // run [WORKLOAD] (no workload: the built-in demo)
void add_bench_command(CLI::App& app);    // bench stream ... (DMA timing calibration)
void add_pad_command(CLI::App& app);      // pad --op OP --shape N,C,H,W (cmd_pad.cpp)
void add_trace_command(CLI::App& app);    // trace summary|export|filter|diff (cmd_trace.cpp)
void add_report_command(CLI::App& app);   // report RUN_DIR|TRACE -o report.html (cmd_report.cpp)
void add_import_command(CLI::App& app);   // import MODEL.onnx -o DIR (cmd_import.cpp)
void add_plan_command(CLI::App& app);     // plan WORKLOAD|MODEL.onnx: tensor tags (cmd_plan.cpp)
void add_compare_command(CLI::App& app);  // compare RUN_A RUN_B [...]: layer by layer (cmd_compare.cpp)

/// `--split auto|on|off`, `--split-rounding` and `--constant-packs` (split_flags.cpp), shared by `run` and `plan`.
struct SplitFlags {
  std::string split;  ///< empty: the model's default (RunConfig::split_by_format)
  std::string rounding = "align";
  std::string packs = "on";
  std::vector<std::string> place;  ///< `--place NAME=PLACEMENT`, each
  SplitOptions options() const;
};
void add_split_flags(CLI::App& cmd, SplitFlags& flags);

/// One-line summary of an arch: "4 core groups x 8x8 cores, 64 KiB ldm, 1.45 GHz, ..." (cmd_arch.cpp).
std::string arch_summary(const Arch& arch);

}  // namespace ldmsim::cli
