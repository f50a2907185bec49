// Workloads: a JSON graph of named tensors and an ordered list of operators, validated before anything runs,
// and the executor that stages, runs each op on a Machine and collects outputs and stats.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/runtime/operator.hpp"
#include "ldmsim/runtime/padding.hpp"

namespace ldmsim {

/// A declared tensor. Inputs carry an init; tensors produced by ops may omit shape (inferred).
struct TensorDecl {
  std::string name;
  std::optional<Shape4> shape;
  std::string dtype = "f16";
  nlohmann::json init;           ///< null for tensors produced by ops
  std::vector<float> file_data;  ///< values of a {"file": ...} init, read at load
};

/// One operator invocation.
struct OpDecl {
  std::string type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  nlohmann::json attrs = nlohmann::json::object();
};

/// A validated workload: every tensor has a shape, every op an operator.
struct Workload {
  std::string name;
  std::filesystem::path base_dir;  ///< relative .npy paths resolve here
  std::map<std::string, TensorDecl> tensors;
  std::vector<OpDecl> ops;
  std::vector<std::string> outputs;
  std::optional<std::string> arch;
  std::optional<StagingPolicy> staging;

  /// Parses and validates (ConfigError naming the op index or tensor). Needs the registry filled.
  static Workload from_json(const nlohmann::json& tree, const std::filesystem::path& base_dir, const Registry& registry,
                            std::string name = "workload");
  static Workload load(const std::filesystem::path& file, const Registry& registry);
};

/// What a run produced.
struct WorkloadResult {
  std::map<std::string, std::vector<f16>> outputs;  ///< logical (stripped) values
  std::map<std::string, Shape4> shapes;
  nlohmann::json stats;
};

/// Per-run options.
struct ExecuteOptions {
  StagingPolicy staging = StagingPolicy::kMethod;
  /// Called after each op with (index, type, simulated seconds so far).
  std::function<void(std::size_t, const std::string&, double)> progress;
};

/// Stages the inputs, runs every op in order on `machine` and strips the outputs. Faults propagate.
WorkloadResult execute(const Workload& workload, Machine& machine, const Registry& registry,
                       const ExecuteOptions& options = {});

}  // namespace ldmsim
