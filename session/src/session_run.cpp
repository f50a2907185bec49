// Session::run: one model on a fresh machine, its files written by the rules of run_directory.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/run_record.hpp"
#include "ldmsim/session/layer_metrics.hpp"
#include "ldmsim/session/run_record.hpp"
#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "source_layers.hpp"

namespace ldmsim {
namespace {

/// The model's graph with the caller's input values in place (ConfigError naming an unknown input, a constant or
/// a shape that differs); null when the request gives none.
std::unique_ptr<Graph> graph_with_inputs(const Model& model, const std::map<std::string, TensorValues>& inputs) {
  if (inputs.empty()) return nullptr;
  auto graph = std::make_unique<Graph>(model.graph());
  for (const auto& [name, value] : inputs) {
    const std::optional<std::size_t> t = graph->find(name);
    if (!t || !graph->tensor(*t).is_input()) {
      std::string known;
      for (const TensorInfo& input : model.inputs()) known += (known.empty() ? "" : ", ") + input.name;
      throw ConfigError(fmt::format("input '{}': model {} has no such input (its inputs: {})", name, model.name(),
                                    known.empty() ? "none" : known));
    }
    const TensorNode& node = graph->tensor(*t);
    if (node.init.constant.value_or(false)) {
      throw ConfigError(fmt::format("input '{}': a constant of model {} (a weight), not an input", name, model.name()));
    }
    if (value.dtype != node.dtype) {
      throw ConfigError(fmt::format("input '{}': {} values given, the model's input is {}", name,
                                    to_string(value.dtype), to_string(node.dtype)));
    }
    if (value.shape != node.shape.dims_vector()) {
      throw ConfigError(fmt::format("input '{}': shape [{}] given, the model's input has shape {}", name,
                                    fmt::join(value.shape, ", "), node.shape.str()));
    }
    graph->set_input_values(*t, value.values);
  }
  return graph;
}

/// The model's import notes that hold for a run given `inputs`: a note on an input's load-time values (random,
/// rounded) is left out when the run gives that input; a run's rounded input gets the note an import gives.
/// Inputs' notes first, then the model's, as the import orders them.
std::vector<std::string> run_notes(const Model& model, const std::map<std::string, TensorValues>& inputs) {
  std::vector<std::string> notes;
  for (const ImportNote& note : model.import_notes()) {
    if (!note.input.empty() && !inputs.contains(note.input)) notes.push_back(note.text);
  }
  for (const auto& [name, value] : inputs) {
    if (value.rounded_from_f32) notes.push_back(rounded_input_note(name));
  }
  for (const ImportNote& note : model.import_notes()) {
    if (note.input.empty()) notes.push_back(note.text);
  }
  return notes;
}

/// stats.json's account of the fusion pass and the import.
void add_model_stats(const Model& model, const std::vector<std::string>& notes, nlohmann::json& stats) {
  const FusedGraph* fused = model.fusion();
  stats["fusion"] = {{"enabled", fused != nullptr},
                     {"groups", fused ? fused->groups.size() : 0},
                     {"fused_kernels", fused ? std::count_if(fused->groups.begin(), fused->groups.end(),
                                                             [](const FusionGroup& g) { return g.mapping.has_value(); })
                                             : 0},
                     {"activation_folds", fused ? fused->activation_folds() : 0},
                     {"residual_folds", fused ? fused->residual_folds() : 0},
                     {"ops_before", model.loaded_graph().ops().size()}};
  if (model.format() == "onnx") stats["import_notes"] = notes;
}

}  // namespace

RunResult Session::run(const Model& model, const RunRequest& request) {
  const std::unique_ptr<Graph> given = graph_with_inputs(model, request.inputs);
  const Graph& graph = given ? *given : model.graph();
  check_host_memory(model.host_memory_bound(), fmt::format("workload '{}'", graph.name));
  std::vector<std::string> output_names;
  for (const std::size_t t : graph.outputs()) output_names.push_back(graph.tensor(t).name);
  const nlohmann::json run_info = {{"workload", graph.name}, {"staging", std::string(to_string(model.staging()))}};

  std::unique_ptr<RunDirectory> dir;
  if (request.outputs) {
    const std::filesystem::path trace_option = request.outputs->trace;
    dir = std::make_unique<RunDirectory>(request.outputs->dir.string(), config_.machine.trace ? &trace_option : nullptr,
                                         output_names, run_info, model.files_read());
  }
  RunResult result;
  const std::shared_ptr<Machine> taken = take_machine(model.arch());
  Machine& machine = *taken;
  enable_checks(machine, config_.check);  // also forgets an earlier run's reports
  if (config_.machine.trace) result.machine = taken;
  ExecuteOptions options;
  options.staging = model.staging();
  options.split = split_for(config_, model.format());
  LayerLdmProbe ldm_probe(machine);
  // should_stop is asked on this thread (a Python stop request can only be read here): once before the run, then
  // after each op when the run stays on this thread, else every 50 ms while the run goes on on the machine's launch
  // thread (execute's poll); never again once it said stop. What it throws stops the run and is thrown instead of
  // RunInterrupted. A stop seen after the last op still stops the run: the request was made while it ran.
  std::atomic<bool> stop{false};
  std::exception_ptr stop_error;  // written and read on this thread only
  const std::thread::id caller = std::this_thread::get_id();
  const auto ask = [&request, &stop, &stop_error] {
    if (stop || !request.should_stop) return;
    try {
      if (request.should_stop()) stop = true;
    } catch (...) {
      stop_error = std::current_exception();
      stop = true;
    }
  };
  const auto interrupted = [&stop_error] {
    if (stop_error) std::rethrow_exception(stop_error);
    throw RunInterrupted("the run was interrupted");
  };
  if (request.should_stop) options.poll = ask;
  ask();
  if (stop) interrupted();
  // After each op: its stats entry is made only for a caller's progress callback.
  options.on_op = [&request, &ldm_probe, &stop, &ask, caller](const OpNode& op, const OpRecord& record) {
    ldm_probe.op_done();
    if (request.progress) request.progress(op, to_json(record));
    if (std::this_thread::get_id() == caller) ask();
    if (stop) throw RunInterrupted("the run was interrupted");
  };
  const TraceWriter write_trace = [&machine](const std::filesystem::path& file, const nlohmann::json& info) {
    machine.write_trace(file, info);
  };
  HostStopwatch clock;
  ExecutionResult executed;
  keep_heap();  // the launches' buffers stay faulted in, this run and the next
  try {
    executed = execute(graph, model.plan(), machine, options);
  } catch (const RunInterrupted&) {
    interrupted();
  } catch (const Fault& fault) {
    // A trapped run leaves a consistent set: stats.json and the trace, both recording the fault, and none of
    // this model's .npy outputs (an earlier run's would look like results).
    if (dir) {
      nlohmann::json stats = machine.stats().to_json();
      stats["workload"] = graph.name;
      if (config_.check.any()) stats["check"] = check_reports_json(check_reports(machine));
      dir->remove_stale_outputs(output_names);
      write_run_record(*dir, std::move(stats), run_info, &fault, write_trace);
      dir->complete();
    }
    throw;
  }
  if (stop) interrupted();
  nlohmann::json phases = model.host_phases();
  phases["execute_seconds"] = clock.lap();
  result.stats = std::move(executed.stats);
  add_run_layer_metrics(result.stats, Roofline::of(machine.arch()), ldm_probe.high_waters());
  add_source_layers(result.stats, model);
  result.ops = std::move(executed.ops);
  result.summary = std::move(executed.summary);
  result.notes = run_notes(model, request.inputs);
  add_model_stats(model, result.notes, result.stats);
  result.stats["tool_version"] = version();
  result.stats["fault"] = nullptr;
  if (config_.check.any()) result.stats["check"] = check_reports_json(check_reports(machine));
  for (auto& [name, values] : executed.outputs) {
    result.outputs[name] =
        TensorValues{executed.shapes.at(name).dims_vector(), SharedHalves(std::move(values)), executed.types.at(name)};
  }
  result.host_times = std::move(executed.host_times);
  if (dir) {
    for (const auto& [name, tensor] : result.outputs)
      write_npy(dir->npy(name), tensor.shape, tensor.dtype, tensor.values.span());
    phases["write_outputs_seconds"] = clock.lap();
  }
  result.host_times["phases"] = std::move(phases);
  if (dir) {
    write_file_atomically(dir->host_times(), result.host_times.dump(2) + "\n", "host times file");
    write_run_record(*dir, result.stats, run_info, nullptr, write_trace);
    dir->complete();
    result.written = RunOutputs{dir->dir(), dir->trace()};
  }
  return result;
}

}  // namespace ldmsim
