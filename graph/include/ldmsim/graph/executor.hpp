// The executor: follows an ExecutionPlan on a Machine. Graph inputs are generated on the host and staged once;
// everything between ops stays in simulated main memory (re-layouts are device kernels); dead tensors are freed
// after their last consumer; graph outputs are downloaded and stripped at the end.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/graph/graph.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/graph/run_record.hpp"
#include "ldmsim/graph/split.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace ldmsim {

struct ExecuteOptions {
  StagingPolicy staging = StagingPolicy::kMethod;
  /// The split rule (docs/splitting.md): off runs every op on every group with its tensors in group 0's memory.
  SplitOptions split;
  /// Called after each op with the op and its entry of stats["ops"] (cycles, seconds, bound, ...).
  std::function<void(const OpNode&, const nlohmann::json&)> progress;
  /// Called after each op with its record (before its host_seconds are known).
  std::function<void(const OpNode&, const OpRecord&)> on_op;
  /// The run goes on on the machine's first launch thread (Machine::run_control), so `progress` and `on_op` may be
  /// called on another thread than the caller's; `poll`, when given, is called on the caller's thread about every
  /// 50 ms meanwhile (never when the run stays on the caller's thread). It must not throw.
  std::function<void()> poll;
};

/// What a run produced.
struct ExecutionResult {
  std::map<std::string, std::vector<f16>> outputs;  ///< logical (stripped) values in 2-byte units (dtype.hpp)
  std::map<std::string, Shape> shapes;
  std::map<std::string, DType> types;
  /// One record per op, in the order they ran; the run's summary (run_record.hpp).
  std::vector<OpRecord> ops;
  RunSummary summary;
  /// to_json(summary, ops): simulated results only, identical for identical runs on any number of host threads.
  nlohmann::json stats;
  /// Host-side times (staging copies), which vary from run to run: {staging_host_seconds, ops[]}.
  nlohmann::json host_times;
};

/// ConfigError when `graph` cannot run on a machine of `arch` under `plan`: a tensor larger than a core group's main
/// memory, an op that refuses the arch (BoundOp::check_arch). What `execute` checks before it allocates anything,
/// and what `ldmsim plan` checks, so the two refuse the same inputs.
void check_runnable(const Graph& graph, const ExecutionPlan& plan, const Arch& arch);
/// A bound on the host memory a run of `graph` under `plan` takes for its tensors: the simulated main memory they
/// hold at the plan's peak (committed on the host as it is written), plus twice the fp16 bytes of every graph input
/// and output (their host values, and a staging or download copy of each). docs/user-guide.md "Host memory".
std::uint64_t host_memory_bound(const Graph& graph, const ExecutionPlan& plan);
/// Plans (default passes) and runs `graph` on `machine`, as its control core (Machine::run_control). Faults
/// propagate; ConfigError before anything is allocated when a tensor cannot fit the machine's memory.
ExecutionResult execute(const Graph& graph, Machine& machine, const ExecuteOptions& options = {});
/// Runs an existing plan.
ExecutionResult execute(const Graph& graph, const ExecutionPlan& plan, Machine& machine,
                        const ExecuteOptions& options = {});

/// The initial values of a graph input in 2-byte units (uniform / normal from the seed, a value, or file data).
/// A model's data is returned as the graph holds it (shared, not copied).
SharedHalves initial_values(const TensorNode& tensor);

}  // namespace ldmsim
