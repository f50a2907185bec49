// ldmsim.Session, Model and RunResult over the session layer: keyword arguments become a RunConfig, numpy arrays
// become fp16 inputs, outputs come back as numpy arrays, stats and layers as plain dicts. The GIL is released
// while a model loads and runs; a KeyboardInterrupt stops a run between two ops.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "errors.hpp"
#include "json_python.hpp"
#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/fp16.hpp"
#include "numpy_tensors.hpp"

namespace py = pybind11;

namespace ldmsim::python {

namespace {

/// `split`: True / "on" (the rule), "auto" (the cost-aware choice), False / "off"; None: the model's default.
SplitOptions split_mode(const py::object& split) {
  if (split.is_none()) return {};
  if (py::isinstance<py::bool_>(split)) return {.enabled = split.cast<bool>()};
  if (py::isinstance<py::str>(split)) {
    const auto mode = split.cast<std::string>();
    if (mode == "auto" || mode == "on" || mode == "off")
      return {.enabled = mode != "off", .cost_aware = mode == "auto"};
    throw ConfigError("split must be 'auto', 'on', 'off', True, False or None, not '" + mode + "'");
  }
  throw py::type_error("split must be 'auto', 'on', 'off', True, False or None, not " +
                       std::string(py::str(split.get_type().attr("__name__"))));
}

RunConfig make_config(const py::object& arch, bool fusion, const std::optional<std::string>& staging,
                      const py::object& split, const std::string& split_rounding, bool constant_packs,
                      const std::map<std::string, std::string>& placements, const std::optional<std::string>& conv_algo,
                      unsigned threads, bool trace, const std::string& trace_codec, bool lint,
                      const std::string& check) {
  RunConfig config;
  if (const auto path = as_path(arch)) {
    config.arch = path->string();
  } else if (py::isinstance<py::dict>(arch)) {
    config.custom_arch = arch_from_dict(arch);
  } else if (!arch.is_none()) {
    throw py::type_error("arch must be a preset name, an arch JSON file, a dict (ldmsim.arch()) or None, not " +
                         std::string(py::str(arch.get_type().attr("__name__"))));
  }
  config.fusion = fusion;
  if (staging) config.staging = parse_staging_policy(*staging);
  const SplitOptions mode = split_mode(split);
  config.split.enabled = mode.enabled;
  config.split.cost_aware = mode.cost_aware;
  config.split_by_format = split.is_none();
  const auto rounding = parse_split_rounding(split_rounding);
  if (!rounding) throw ConfigError("split_rounding must be align, exact or pad, not '" + split_rounding + "'");
  config.split.rounding = *rounding;
  config.split.pack_constants = constant_packs;
  config.split.pinned = placements;
  if (!placements.empty() && !split.is_none() && !(mode.enabled && mode.cost_aware)) {
    throw ConfigError(
        "placements pin the cost-aware choice: give split='auto' (or leave split None for an ONNX model)");
  }
  config.conv_algo = conv_algo.value_or("");
  config.machine.threads = threads;
  config.machine.trace = trace;
  const auto codec = parse_trace_codec(trace_codec);
  if (!codec) throw ConfigError("trace_codec must be zstd or raw, not '" + trace_codec + "'");
  config.machine.trace_codec = *codec;
  config.machine.alignment = lint ? AlignmentPolicy::kLint : AlignmentPolicy::kTrap;
  config.check = parse_check_set(check, "check");
  return config;
}

py::list tensor_infos(const std::vector<TensorInfo>& infos) {
  py::list out;
  for (const TensorInfo& t : infos) {
    py::dict d;
    d["name"] = utf8_text(t.name);
    d["shape"] = py::tuple(py::cast(t.shape));
    d["constant"] = t.constant;
    d["dtype"] = std::string(to_string(t.dtype));
    out.append(std::move(d));
  }
  return out;
}

// What run() returns: outputs as numpy arrays of the dtype asked for; stats, host times and layers converted to
// Python once, on first use.
class PythonRunResult {
 public:
  PythonRunResult(RunResult result, bool as_float16) : result_(std::move(result)), as_float16_(as_float16) {}

  py::dict outputs() {
    if (!outputs_) {
      py::dict d;
      for (const auto& [name, tensor] : result_.outputs) d[utf8_text(name)] = to_numpy(tensor, as_float16_);
      outputs_ = std::move(d);
    }
    return *outputs_;
  }
  py::object stats() {
    if (!stats_) stats_ = to_python(result_.stats);
    return *stats_;
  }
  py::object host_times() { return to_python(result_.host_times); }
  const std::vector<std::string>& notes() const { return result_.notes; }
  py::list layers() { return stats()["ops"].cast<py::list>(); }
  std::uint64_t cycles() const { return result_.cycles(); }
  double seconds() const { return result_.stats.value("seconds", 0.0); }

 private:
  RunResult result_;
  bool as_float16_;
  std::optional<py::dict> outputs_;
  std::optional<py::object> stats_;
};

// What run_together() returns: per model its RunResult or the exception it ended with, and the machine's summary.
class PythonTogetherResult {
 public:
  PythonTogetherResult(TogetherResult together, bool as_float16)
      : names_(std::move(together.names)), summary_(to_python(together.summary)) {
    for (std::size_t k = 0; k < names_.size(); ++k) {
      if (together.errors[k]) {
        results_.append(py::none());
        errors_.append(exception_object(together.errors[k]));
      } else {
        results_.append(py::cast(PythonRunResult(std::move(together.results[k]), as_float16)));
        errors_.append(py::none());
      }
    }
    makespan_ = together.stats.makespan;
  }
  const std::vector<std::string>& names() const { return names_; }
  const py::list& results() const { return results_; }
  const py::list& errors() const { return errors_; }
  const py::object& stats() const { return summary_; }
  std::uint64_t makespan() const { return makespan_; }
  bool ok() const {
    for (const auto& error : errors_) {
      if (!error.is_none()) return false;
    }
    return true;
  }
  void raise_first() const {
    for (const auto& error : errors_) {
      if (!error.is_none()) {
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
        throw py::error_already_set();
      }
    }
  }

 private:
  std::vector<std::string> names_;
  py::list results_;
  py::list errors_;
  py::object summary_;
  std::uint64_t makespan_ = 0;
};

void check_dtype(const std::string& dtype) {
  if (dtype != "float32" && dtype != "float16") {
    throw ConfigError("dtype must be 'float32' or 'float16', not '" + dtype + "'");
  }
}

// The run's stop request: polled by the session on the thread that called run(), before the run and every 50 ms
// while it goes on. A pending signal (Ctrl-C) runs its Python handler there; the exception it raises is kept and
// raised again once the run stopped.
class InterruptCheck {
 public:
  bool operator()() {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return false;
    PyErr_Fetch(&type_, &value_, &traceback_);
    return true;
  }
  [[noreturn]] void raise() {
    if (type_ == nullptr) {
      PyErr_SetString(PyExc_KeyboardInterrupt, "the run was interrupted");
    } else {
      PyErr_Restore(std::exchange(type_, nullptr), std::exchange(value_, nullptr), std::exchange(traceback_, nullptr));
    }
    throw py::error_already_set();
  }
  ~InterruptCheck() {  // a check that fired but whose run ended otherwise (a fault came first): drop the error
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(traceback_);
  }

 private:
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
};

class PythonSession {
 public:
  explicit PythonSession(RunConfig config) : session_(std::move(config)) {}

  std::shared_ptr<const Model> load(const py::object& source, const std::optional<std::filesystem::path>& base_dir,
                                    const std::map<std::string, std::filesystem::path>& input_files,
                                    std::size_t contexts) {
    if (const auto path = as_path(source)) {
      ModelReadOptions options;
      options.input_files = input_files;
      py::gil_scoped_release unlocked;
      return std::make_shared<const Model>(session_.load(*path, options, contexts));
    }
    if (!input_files.empty()) throw ConfigError("input_files are an ONNX model's: give the model as a file");
    if (py::isinstance<py::dict>(source)) {
      const nlohmann::json workload = from_python(source, "workload");
      py::gil_scoped_release unlocked;
      return std::make_shared<const Model>(session_.load(workload, base_dir.value_or("."), contexts));
    }
    throw py::type_error("load() takes a model file (ONNX or workload JSON) or a workload dict, not " +
                         std::string(py::str(source.get_type().attr("__name__"))));
  }

  PythonRunResult run(const Model& model, const py::object& inputs, const std::optional<std::filesystem::path>& out,
                      const std::string& dtype) {
    check_dtype(dtype);
    RunRequest request;
    if (!inputs.is_none()) request.inputs = input_tensors(inputs);
    if (out) request.outputs = RunOutputs{*out, {}};
    InterruptCheck interrupt;
    request.should_stop = [&interrupt] { return interrupt(); };
    std::optional<RunResult> result;
    try {
      py::gil_scoped_release unlocked;
      result = session_.run(model, request);
    } catch (const RunInterrupted&) {
      interrupt.raise();
    }
    return PythonRunResult(std::move(*result), dtype == "float16");
  }

  PythonTogetherResult run_together(const py::sequence& models, const std::string& schedule,
                                    const std::optional<std::filesystem::path>& out, const std::string& dtype) {
    if (schedule != "sequential" && schedule != "pipelined") {
      throw ConfigError("schedule must be 'sequential' or 'pipelined', not '" + schedule + "'");
    }
    check_dtype(dtype);
    std::vector<const Model*> order;
    for (const auto& model : models) {  // `models` keeps them alive through the run
      if (!py::isinstance<Model>(model)) {
        throw py::type_error("run_together() takes a list of ldmsim.Model (from Session.load), not " +
                             std::string(py::str(model.get_type().attr("__name__"))));
      }
      order.push_back(model.cast<const Model*>());
    }
    std::optional<RunOutputs> outputs;
    if (out) outputs = RunOutputs{*out, {}};
    std::optional<TogetherResult> together;
    {
      py::gil_scoped_release unlocked;
      together = session_.run_together(
          order, schedule == "pipelined" ? ContextSchedule::kPipelined : ContextSchedule::kSequential, outputs);
    }
    return PythonTogetherResult(std::move(*together), dtype == "float16");
  }

  const RunConfig& config() const { return session_.config(); }

 private:
  Session session_;
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>>(
      m, "Model", "A model loaded by Session.load(): read, fused and planned; runs many times.")
      .def_property_readonly("name", &Model::name)
      .def_property_readonly("format", &Model::format, "'onnx' or 'workload-json'")
      .def_property_readonly("origin", [](const Model& model) { return model.origin(); })
      .def_property_readonly(
          "inputs", [](const Model& model) { return tensor_infos(model.inputs()); },
          "The inputs a run may give values for: dicts of name, shape, constant.")
      .def_property_readonly(
          "all_inputs", [](const Model& model) { return tensor_infos(model.inputs(true)); },
          "Every graph input, the model's constants (constant=True) included.")
      .def_property_readonly(
          "outputs", [](const Model& model) { return tensor_infos(model.outputs()); },
          "The graph's outputs: dicts of name, shape.")
      .def_property_readonly("arch", [](const Model& model) { return to_python(model.arch().to_json()); })
      .def_property_readonly("staging", [](const Model& model) { return std::string(to_string(model.staging())); })
      .def_property_readonly("notes", &Model::notes,
                             "What the import decided for the user as the model was loaded (random inputs, "
                             "rounding); a run's own are RunResult.notes.")
      .def_property_readonly("host_memory_bound", &Model::host_memory_bound,
                             "Host bytes a run takes for its tensors at most.")
      .def("describe", &Model::describe, "The graph after the passes, as `ldmsim run --dump-graph` prints it.")
      .def("__repr__", [](const Model& model) {
        return "<ldmsim.Model '" + model.name() + "' (" + model.format() + ", " + model.arch().name + ")>";
      });

  py::class_<PythonRunResult>(m, "RunResult", "What Session.run() returns.")
      .def_property_readonly("outputs", &PythonRunResult::outputs,
                             "Output name -> numpy array (float32, or float16 when run with dtype='float16').")
      .def_property_readonly("stats", &PythonRunResult::stats,
                             "stats.json as a dict: simulated results, identical on any number of host threads.")
      .def_property_readonly("layers", &PythonRunResult::layers,
                             "One dict per op in run order (stats['ops']); pandas.DataFrame(result.layers) takes it.")
      .def_property_readonly("host_times", &PythonRunResult::host_times, "host_times.json as a dict.")
      .def_property_readonly("notes", &PythonRunResult::notes,
                             "What the import decided that holds for this run (an input given to run() has no "
                             "load-time note; a float32 one is said to be rounded to fp16).")
      .def_property_readonly("cycles", &PythonRunResult::cycles, "Simulated cycles of the run.")
      .def_property_readonly("seconds", &PythonRunResult::seconds, "Simulated seconds of the run.");

  py::class_<PythonSession>(
      m, "Session",
      "Loads models and runs them, each run on a machine in the state of a new one: the session's own, "
      "reset between runs (docs/python.md).")
      .def(py::init([](const py::object& arch, bool fusion, const std::optional<std::string>& staging,
                       const py::object& split, const std::string& split_rounding, bool constant_packs,
                       const std::map<std::string, std::string>& placements,
                       const std::optional<std::string>& conv_algo, unsigned threads, bool trace,
                       const std::string& trace_codec, bool lint, const std::string& check) {
             return std::make_unique<PythonSession>(make_config(arch, fusion, staging, split, split_rounding,
                                                                constant_packs, placements, conv_algo, threads, trace,
                                                                trace_codec, lint, check));
           }),
           py::kw_only(), py::arg("arch") = py::none(), py::arg("fusion") = true, py::arg("staging") = py::none(),
           py::arg("split") = py::none(), py::arg("split_rounding") = "align", py::arg("constant_packs") = true,
           py::arg("placements") = std::map<std::string, std::string>{}, py::arg("conv_algo") = py::none(),
           py::arg("threads") = 0u, py::arg("trace") = false, py::arg("trace_codec") = "zstd", py::arg("lint") = false,
           py::arg("check") = "off",
           "arch: a preset name, an arch JSON file or a dict (ldmsim.arch() changed); None: the model's own, else "
           "sw26010. staging: 'method', 'naive' or 'none'; None: the model's own, else 'method'. split: place "
           "tensors and ops over the core groups (docs/splitting.md): 'auto', 'on' (or True), 'off' (or False); None: "
           "'auto' for an ONNX model, 'off' for a workload JSON. placements: {op name: placement} pinned in the "
           "cost-aware choice, as --place pins them. "
           "conv_algo: for every conv that sets none. "
           "threads: host threads (0: one per core group up to the host's cores). trace: record a DMA trace "
           "(written to OUT/trace.ldmtrace by run(out=OUT)). lint: record alignment violations instead of "
           "trapping. check: checking mode, 'races,init,bounds' (comma-separated), 'all' or 'off' (docs/checking.md): "
           "the reports are in the result's stats['check'].")
      .def("load", &PythonSession::load, py::arg("model"), py::kw_only(), py::arg("base_dir") = py::none(),
           py::arg("input_files") = std::map<std::string, std::filesystem::path>{}, py::arg("contexts") = 1u,
           "A model file (ONNX or workload JSON, told apart by content) or a workload dict (base_dir resolves its "
           ".npy files). input_files: an ONNX model's input values as .npy files by input name, read with the "
           "model as `ldmsim run --input NAME=FILE` does. contexts: how many models will share the machine in "
           "run_together() (fusion then fits one context's share of the local store). ConfigError naming the "
           "problem.")
      .def("run", &PythonSession::run, py::arg("model"), py::arg("inputs") = py::none(), py::kw_only(),
           py::arg("out") = py::none(), py::arg("dtype") = "float32",
           "Runs `model` with `inputs` (name -> float32 or float16 array of the input's shape; the others keep "
           "their values). out: a directory to write the run's files to (outputs as .npy, stats.json, "
           "host_times.json, the trace), as `ldmsim run --out` does. Raises Fault when the machine traps (after "
           "writing the files), ConfigError for bad inputs, KeyboardInterrupt on Ctrl-C (between two ops).")
      .def("run_together", &PythonSession::run_together, py::arg("models"), py::kw_only(),
           py::arg("schedule") = "sequential", py::arg("out") = py::none(), py::arg("dtype") = "float32",
           "Runs several models on one machine, each in its own context (docs/pipelining.md), as `ldmsim run A B "
           "[--concurrent]` does: schedule 'sequential' (one after another) or 'pipelined'. Each model must be "
           "loaded with contexts=len(models) (or more) and share one arch. out: a directory for OUT/stats.json, "
           "OUT/schedule.svg, the trace and each model's files in OUT/NAME/. A model that traps keeps its fault "
           "in TogetherResult.errors and the others finish; ConfigError (raised) for models that cannot run "
           "together.");

  py::class_<PythonTogetherResult>(m, "TogetherResult", "What Session.run_together() returns.")
      .def_property_readonly("names", &PythonTogetherResult::names, "The models' names, in the order given.")
      .def_property_readonly("results", &PythonTogetherResult::results,
                             "Per model its RunResult, or None when it failed (see errors).")
      .def_property_readonly("errors", &PythonTogetherResult::errors,
                             "Per model None, or the exception it ended with (ldmsim.Fault for a trap).")
      .def_property_readonly("ok", &PythonTogetherResult::ok, "True when every model finished.")
      .def("raise_first", &PythonTogetherResult::raise_first, "Raises the first model's exception, if any.")
      .def_property_readonly("stats", &PythonTogetherResult::stats,
                             "OUT/stats.json as a dict: the machine's makespan, busy and idle core-cycles, "
                             "switches, and a summary per model (start and end cycle, status, fault).")
      .def_property_readonly("makespan", &PythonTogetherResult::makespan,
                             "Simulated cycles until the last model finished.");
}

}  // namespace ldmsim::python
