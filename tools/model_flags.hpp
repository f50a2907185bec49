// The flags `run` and `plan` share to load a model (arch, staging, fusion, placement, convolution algorithm,
// input files), turned into the session's typed RunConfig and ModelReadOptions in one place.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "ldmsim/session/session.hpp"

namespace ldmsim::cli {

struct ModelFlags {
  std::string arch = kDefaultArch;
  bool arch_given = false;  ///< --arch on the command line overrides the model's arch
  std::string staging;      ///< empty: the model's, else method
  std::string fusion = "on";
  SplitFlags split;
  std::string conv_algo;            ///< empty: each conv's own "algo"
  std::vector<std::string> inputs;  ///< an ONNX model's --input NAME=FILE.npy values
  std::string check = "off";        ///< --check: races,init,bounds | all | off (run only)

  RunConfig config(const MachineOptions& machine = {}) const;
  ModelReadOptions read_options() const;
};

/// What `run MODEL...` needs from the run command's options beyond the model flags.
struct ModelRunArgs {
  ModelFlags model;
  MachineOptions machine;  ///< threads, tracing, codec, spill directory, alignment policy
  std::string out;
  std::string trace;              ///< empty: OUT/trace.ldmtrace
  bool dump_graph = false;        ///< print the graph after the passes before running
  bool explain = false;           ///< print the ops' choices (recurrent layers' EP/VP search) after the run
  std::string layers_csv;         ///< empty: none; else the per-layer CSV's path (layers_csv.hpp)
  std::string progress = "auto";  ///< per-layer progress lines: auto (on a terminal), always or never
};
/// Runs one model: outputs as .npy, stats.json and the trace in OUT (cmd_workload.cpp).
void run_workload_command(const std::string& workload, const ModelRunArgs& args);
/// Runs several models on one machine, one context each, pipelined or one after another (cmd_models.cpp).
void run_models_command(const std::vector<std::string>& workloads, bool pipelined, const ModelRunArgs& args);

/// The --input NAME=FILE.npy options as a map; ConfigError for a malformed one or a name given twice.
std::map<std::string, std::filesystem::path> input_files(const std::vector<std::string>& inputs);

/// Prints the checking reports of a run's stats.json (`check`) to stderr, each line naming `model` when it is not
/// empty; returns how many there were.
std::size_t print_check_reports(const nlohmann::json& stats, std::string_view model);
/// Prints the checking reports of a run's stats.json (`check`) to stderr and throws CheckReported when there are any.
void throw_if_check_reports(const nlohmann::json& stats);
/// Throws CheckReported (exit status 4) for `sites` report sites.
[[noreturn]] void throw_check_reported(std::size_t sites);

/// Prints an ONNX import's notes to stderr, one "ldmsim: note: ..." line each.
void print_notes(const Model& model);

/// The host threads a machine of `arch` made with `machine` runs its core groups on (MachineOptions::threads; 0:
/// min(hardware threads, core groups)): a plan priced outside a run uses as many as the run would.
unsigned machine_threads(const MachineOptions& machine, const Arch& arch);

}  // namespace ldmsim::cli
