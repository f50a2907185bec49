// A model loaded for running: read by the front end its contents call for (a workload JSON or an ONNX model),
// its arch and staging resolved, fused when the configuration asks for it, and planned. Immutable once loaded, so
// one Model can run many times (with different input values) and from several Sessions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/frontends/onnx_import.hpp"
#include "ldmsim/graph/fusion.hpp"
#include "ldmsim/graph/graph.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

/// One graph input or output as a user sees it.
struct TensorInfo {
  std::string name;
  std::vector<std::size_t> shape;
  bool constant = false;  ///< a weight of the model (inputs only)
  DType dtype = DType::kF16;
};

class Model {
 public:
  /// The file it was read from (empty for a workload given as a JSON tree).
  const std::string& origin() const { return origin_; }
  /// The front end that read it: "workload-json" or "onnx".
  const std::string& format() const { return format_; }
  const std::string& name() const { return graph().name; }
  /// The graph that runs: the fused one when fusion is on.
  const Graph& graph() const { return fused_ ? fused_->graph : *loaded_; }
  /// The graph as the front end built it, before fusion.
  const Graph& loaded_graph() const { return *loaded_; }
  /// The fusion pass's result; null when fusion is off.
  const FusedGraph* fusion() const { return fused_ ? &*fused_ : nullptr; }
  const ExecutionPlan& plan() const { return *plan_; }
  const Arch& arch() const { return arch_; }
  StagingPolicy staging() const { return staging_; }
  /// What the import decided for the user (random inputs, rounding) as the model was loaded; empty for a workload
  /// JSON. A run given an input's values leaves out the notes on that input's load-time values
  /// (RunResult::notes).
  std::vector<std::string> notes() const;
  const std::vector<ImportNote>& import_notes() const { return notes_; }
  /// Graph inputs the caller may give values for (not the model's constants), and every graph input.
  std::vector<TensorInfo> inputs(bool with_constants = false) const;
  std::vector<TensorInfo> outputs() const;
  /// Every file the load read (the model, its .npy files, input files, an arch file): no output of a run may
  /// replace one of them.
  const std::vector<std::filesystem::path>& files_read() const { return files_read_; }
  /// Host seconds of each loading phase: import_seconds (ONNX), load_seconds, fusion_seconds.
  const nlohmann::json& host_phases() const { return host_phases_; }
  /// The graph after the passes (fusion groups, layouts, re-layouts, frees), as `ldmsim run --dump-graph` prints.
  std::string describe() const;
  /// Host memory a run takes for its tensors at most (docs/user-guide.md "Host memory").
  std::uint64_t host_memory_bound() const;
  /// How many models the load planned to share a machine with: fusion fits its groups into one context's ldm
  /// share, so the model runs together with at most this many (Session::run_together).
  std::size_t contexts() const { return contexts_; }

 private:
  friend class Session;
  std::string origin_;
  std::string format_;
  std::optional<Graph> loaded_;
  std::optional<FusedGraph> fused_;
  std::optional<ExecutionPlan> plan_;
  Arch arch_;
  StagingPolicy staging_ = StagingPolicy::kMethod;
  std::vector<ImportNote> notes_;
  std::vector<std::filesystem::path> files_read_;
  nlohmann::json host_phases_ = nlohmann::json::object();
  std::size_t contexts_ = 1;
};

}  // namespace ldmsim
