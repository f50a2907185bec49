// The library-level run API: a Session holds a RunConfig and an operator registry, loads models from any front end
// (chosen by content), runs them on a fresh simulated machine and returns typed results; given an output
// directory it also writes the run's files (outputs as .npy, stats.json, host_times.json, the trace) by the rules
// of docs/user-guide.md "Output files" — also when the run traps, in which case the Fault is rethrown afterwards.
// The CLI only parses flags into it; the Python bindings wrap it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/graph/run_record.hpp"
#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/runtime/concurrent.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/session/model.hpp"
#include "ldmsim/session/model_reader.hpp"
#include "ldmsim/session/run_config.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace ldmsim {

/// Values of one tensor on the host: its shape and C-order values in 2-byte units (fp16 values, or the 32-bit words
/// of an int32 or bool tensor: kernels/dtype.hpp), a run's inputs and outputs.
struct TensorValues {
  std::vector<std::size_t> shape;
  SharedHalves values;
  DType dtype = DType::kF16;
  /// The caller had them as f32 and rounded them (a run's notes then say so, as an import's say of an f32 input file).
  bool rounded_from_f32 = false;
};

/// Where a run writes its files. The directory is owned by the run while it runs (a lock), and marked incomplete
/// until its last file is written.
struct RunOutputs {
  std::filesystem::path dir;
  /// The trace file; empty: DIR/trace.ldmtrace. Ignored when the configuration records no trace.
  std::filesystem::path trace;
};

struct RunRequest {
  /// Values for graph inputs by name (each of the input's shape); the others keep the model's values.
  std::map<std::string, TensorValues> inputs;
  /// Write the run's files there; none when unset.
  std::optional<RunOutputs> outputs;
  /// Called after each op with the op and its entry of stats["ops"], on the thread of the machine's control core
  /// (Machine::run_control), which need not be the caller's.
  std::function<void(const OpNode&, const nlohmann::json&)> progress;
  /// Polled on the caller's thread: before the run, then about every 50 ms (after each op when the run stays on
  /// that thread). Once it returned true (it is not polled again) the run stops with RunInterrupted: before it
  /// starts, after the op that is running, or at its end when the last op had run. What it throws stops the run the
  /// same way and is thrown instead of RunInterrupted.
  std::function<bool()> should_stop;
};

/// What a run produced.
struct RunResult {
  std::map<std::string, TensorValues> outputs;
  /// One record per op in the order they ran, and the run as a whole (typed; `stats` is their JSON).
  std::vector<OpRecord> ops;
  RunSummary summary;
  /// stats.json: simulated results only, identical on any number of host threads.
  nlohmann::json stats;
  /// host_times.json: host seconds per phase and per op.
  nlohmann::json host_times;
  /// The machine the run used, kept so its trace can be written after the run; set only when the run recorded a
  /// trace (RunConfig::machine.trace). While a result holds it, the session's next run takes a new machine.
  std::shared_ptr<Machine> machine;
  /// What the import decided for the user that holds for this run (stats["import_notes"] of an ONNX model): the
  /// model's notes, those on an input given at run time replaced by what the run did with its values.
  std::vector<std::string> notes;
  /// Where the run wrote its files (the trace empty when it wrote none); unset when it wrote none.
  std::optional<RunOutputs> written;
  /// The per-op entries of stats ("ops"), one per op in order, as JSON.
  const nlohmann::json& layers() const { return stats.at("ops"); }
  Cycle cycles() const { return summary.cycles; }
};

/// A run stopped by RunRequest::should_stop; nothing of it is written but what a trapped run writes.
class RunInterrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Several models run on one machine, each in its own context (docs/pipelining.md).
struct TogetherResult {
  std::vector<std::string> names;
  /// Per model: its result, or what it threw (a Fault or another error).
  std::vector<RunResult> results;
  std::vector<std::exception_ptr> errors;
  /// The machine's counters: makespan, busy and idle core-cycles, context switches.
  ConcurrentStats stats;
  /// OUT/stats.json: the machine's makespan, busy and idle core-cycles, switches, and a summary per model.
  nlohmann::json summary;
};

class HeapRetention;

class Session {
 public:
  explicit Session(RunConfig config = {},
                   std::shared_ptr<const OperatorRegistry> registry = nullptr /* builtin operators */);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  const RunConfig& config() const { return config_; }
  const OperatorRegistry& registry() const { return *registry_; }

  /// Reads a model file with the front end its content calls for, then resolves, fuses and plans it, and checks
  /// it can run (ConfigError otherwise, before anything is allocated). `contexts`: how many models will share
  /// the machine (fusion then maps onto one context's ldm share).
  Model load(const std::filesystem::path& file, const ModelReadOptions& options = {}, std::size_t contexts = 1);
  /// The same for a workload given as a JSON tree (docs/workload-format.md); `base_dir` resolves its .npy files.
  Model load(const nlohmann::json& workload, const std::filesystem::path& base_dir = ".", std::size_t contexts = 1);

  /// Runs `model` on a machine of its arch in the state of a new one: the session's machine from its last run,
  /// reset (Machine::reset: warm stacks, local stores, threads and planning caches, the same simulated results),
  /// unless a RunResult still holds it, else a new one. Faults propagate (after the run's files are written when
  /// `request.outputs` is set); ConfigError for bad input values before anything runs.
  RunResult run(const Model& model, const RunRequest& request = {});

  /// Runs several models on one machine, one context each, pipelined or one after another; writes OUT/NAME/ per
  /// model and OUT/stats.json, OUT/schedule.svg and the trace when `outputs` is set. A model that traps keeps its
  /// fault; the others finish. Models must share one arch and be loaded with `contexts` = their count.
  TogetherResult run_together(const std::vector<const Model*>& models, ContextSchedule schedule,
                              const std::optional<RunOutputs>& outputs = std::nullopt);

 private:
  struct Spare;
  Arch arch_for(const std::optional<std::string>& preferred) const;
  Model finish_load(Model model, ReadModel read, std::size_t contexts);
  std::shared_ptr<Machine> take_machine(const Arch& arch);
  /// Raises glibc's malloc thresholds for the rest of the session (HeapRetention), from its first run on.
  void keep_heap();

  RunConfig config_;
  std::shared_ptr<const OperatorRegistry> registry_;
  /// A machine made early (during an ONNX import, whose helper thread commits its memory) for the next run.
  std::unique_ptr<Spare> spare_;
  /// The machine of the last run, reset and reused by the next run on its arch.
  std::shared_ptr<Machine> warm_;
  /// Held from the first run until the session ends, so that a warm run finds the heap pages the last one freed as
  /// it finds its machine (glibc would otherwise trim them between runs; docs/benchmarks.md).
  std::unique_ptr<HeapRetention> kept_heap_;
  /// Guards spare_, warm_ and kept_heap_: runs from several host threads (Python releases the GIL) each take their
  /// own machine.
  std::mutex machines_mutex_;
};

/// ConfigError, before anything is allocated, when a run needing `bytes` of host memory for its tensors would not
/// fit what the host offers: LDMSIM_HOST_MEMORY_BYTES when set, else the kernel's MemAvailable. `what` names it.
void check_host_memory(std::uint64_t bytes, const std::string& what);

/// The ldmsim version ("0.1.0").
const char* version();

}  // namespace ldmsim
