// The JSON workload front end (docs/workload-format.md): named tensors with initial values, an ordered list of
// ops and the graph outputs, read into a Graph. Every error names the file, the JSON path or op index, and the
// tensor, and is raised before anything runs.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/graph/graph.hpp"

namespace ldmsim {

/// Largest workload file read (its tensors' data live in .npy files).
inline constexpr std::uint64_t kMaxWorkloadFileBytes = 16ull << 20;

/// What a caller adds to every workload it loads.
struct WorkloadLoadOptions {
  /// Per op type, attributes an op gets unless it sets them (e.g. {"conv": {"algo": "im2col"}}).
  std::map<std::string, nlohmann::json> default_attrs;
  /// {"file": NAME} inits found here (by NAME as written) are not read from disk (an imported ONNX model's). They
  /// are moved into the graph as they are used (a model's weights are not copied): each may back one tensor.
  std::map<std::string, NpyArray>* arrays = nullptr;
  /// When set, every .npy file read from disk is appended (a caller's outputs must never replace its inputs).
  std::vector<std::filesystem::path>* files_read = nullptr;
};

/// Builds the graph of a parsed workload; `origin` names it in errors, relative .npy paths resolve in `base_dir`.
Graph workload_from_json(const nlohmann::json& tree, const std::string& origin, const std::filesystem::path& base_dir,
                         const OperatorRegistry& registry, std::string name = "workload",
                         const WorkloadLoadOptions& options = {});
/// Reads (bounded, regular files only) and builds a workload file; its name defaults to the file's stem.
Graph load_workload(const std::filesystem::path& file, const OperatorRegistry& registry,
                    const WorkloadLoadOptions& options = {});

}  // namespace ldmsim
