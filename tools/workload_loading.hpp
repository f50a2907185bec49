// Loading a workload JSON or an ONNX model the way `ldmsim run` does (arch and staging from the command line or
// the workload, fusion), shared by `run` and `plan`.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/graph/fusion.hpp"
#include "ldmsim/graph/graph.hpp"
#include "ldmsim/sim/arch.hpp"
#include "model_import.hpp"

namespace ldmsim::cli {

struct LoadArgs {
  std::string workload;
  std::string arch;
  bool arch_given = false;  ///< the command line's --arch overrides the workload's
  std::string staging;      ///< empty: the workload's, else method
  bool fusion = true;
  std::string conv_algo;
  std::vector<std::string> inputs;  ///< an ONNX model's --input NAME=FILE.npy values
  std::size_t contexts = 1;         ///< models sharing the machine: fusion maps onto each one's ldm share
  /// An ONNX model's: work for the import's helper thread once its heap is populated (import_model).
  std::function<void(const std::atomic<bool>& stop)> while_importing;
};

struct LoadedWorkload {
  ImportedModel imported;  ///< an ONNX model's import (notes, arrays)
  std::optional<Graph> loaded;
  Arch arch;
  StagingPolicy policy = StagingPolicy::kMethod;
  std::optional<FusedGraph> fused;
  /// Host seconds of each loading phase (import: reading the ONNX model; load: building the graph; fusion),
  /// for host_times.json.
  nlohmann::json host_phases = nlohmann::json::object();
  /// Every file the load read (the workload or model, its .npy files, --input files, an arch file): no output
  /// of the command may replace one of them.
  std::vector<std::filesystem::path> inputs;
  /// The graph that runs: the fused one when fusion is on.
  const Graph& graph() const { return fused ? fused->graph : *loaded; }
};

/// The files named by --input NAME=FILE.npy options and an --arch FILE (when it is a file, not a preset).
std::vector<std::filesystem::path> option_inputs(const std::vector<std::string>& inputs, const std::string& arch);

/// ConfigError, before anything is allocated, when a run needing `bytes` of host memory for its tensors
/// (host_memory_bound) would not fit what the host offers: LDMSIM_HOST_MEMORY_BYTES when set, else the kernel's
/// MemAvailable. `what` names the run.
void check_host_memory(std::uint64_t bytes, const std::string& what);

/// Loads, resolves the arch and the staging policy, and fuses; ConfigError on bad input.
std::unique_ptr<LoadedWorkload> load_for_run(const LoadArgs& args, const OperatorRegistry& registry);

}  // namespace ldmsim::cli
