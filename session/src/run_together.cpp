// Session::run_together: several models on one machine, one context each (docs/pipelining.md). Writes each
// model's outputs and stats.json to OUT/NAME/, and OUT/stats.json (the machine's makespan, busy and idle
// core-cycles, switches), the schedule picture OUT/schedule.svg and the node's trace. A model that traps keeps its
// fault; the others finish.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>
#include <vector>

#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/runtime/schedule_waits.hpp"
#include "ldmsim/session/layer_metrics.hpp"
#include "ldmsim/session/run_record.hpp"
#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "schedule_svg.hpp"
#include "source_layers.hpp"

namespace ldmsim {
namespace {

constexpr std::size_t kNameLength = 40;

/// Each model's name: its file's stem (else its graph's name), made a safe directory name, unique with "-2", ...
std::vector<std::string> model_names(const std::vector<const Model*>& models) {
  std::vector<std::string> names;
  std::set<std::string> taken = {kIncompleteMarker};  // a directory of that name would be the run marker
  for (const Model* model : models) {
    std::string stem = model->origin().empty() ? model->name() : std::filesystem::path(model->origin()).stem().string();
    for (char& c : stem) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-') c = '_';
    }
    if (stem.empty()) stem = "model";
    stem.resize(std::min(stem.size(), kNameLength));
    std::string name = stem;
    for (int n = 2; taken.count(name) > 0; ++n) name = fmt::format("{}-{}", stem, n);
    taken.insert(name);
    names.push_back(name);
  }
  return names;
}

/// A model's directory inside OUT must be missing or a real directory: a symlink (or a file) in its place would
/// send the model's files outside OUT.
void check_model_directory(const std::filesystem::path& dir, const std::string& name) {
  std::error_code error;
  const auto status = std::filesystem::symlink_status(dir, error);
  if (error || status.type() == std::filesystem::file_type::not_found) return;
  if (status.type() != std::filesystem::file_type::directory) {
    throw ConfigError(
        fmt::format("refusing to write model {}'s outputs to {}: it is {}, not a directory", name, dir.string(),
                    status.type() == std::filesystem::file_type::symlink ? "a symbolic link" : "another kind of file"));
  }
}

std::string error_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

/// The node trace's "check": every model's reports, each naming its model, in order of first occurrence.
nlohmann::json models_check_reports(const nlohmann::json& models) {
  std::vector<nlohmann::json> all;
  for (const nlohmann::json& model : models) {
    if (!model.contains("check")) continue;
    for (nlohmann::json report : model["check"]) {
      report["model"] = model["name"];
      all.push_back(std::move(report));
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return std::make_tuple(a["cycle"].get<Cycle>(), a["cg"].get<int>(), a["core"].get<int>()) <
           std::make_tuple(b["cycle"].get<Cycle>(), b["cg"].get<int>(), b["core"].get<int>());
  });
  return nlohmann::json(std::move(all));
}

std::optional<Fault> fault_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Fault& fault) {
    return fault;
  } catch (...) {
    return std::nullopt;
  }
}

std::vector<std::string> output_names(const Graph& graph) {
  std::vector<std::string> names;
  for (const std::size_t t : graph.outputs()) names.push_back(graph.tensor(t).name);
  return names;
}

/// Checks OUT's layout before anything is written: model directories, output names, the trace and the picture.
void check_together_outputs(const RunOutputs& out, bool trace, const std::vector<std::string>& names,
                            const std::vector<const Model*>& models, const std::vector<std::filesystem::path>& inputs) {
  const std::filesystem::path trace_target = out.trace.empty() ? out.dir / "trace.ldmtrace" : out.trace;
  for (std::size_t k = 0; k < models.size(); ++k) {
    const std::filesystem::path dir = out.dir / names[k];
    check_model_directory(dir, names[k]);
    for (const auto& output : output_names(models[k]->graph())) check_output_name(output, "output tensor");
    if (trace && (path_inside(trace_target, dir) || same_file_path(trace_target, dir))) {
      throw ConfigError(fmt::format("--trace {}: that is inside model {}'s output directory {}; choose another path",
                                    trace_target.string(), names[k], dir.string()));
    }
  }
  const std::filesystem::path picture = out.dir / "schedule.svg";
  if (trace && same_file_path(trace_target, picture)) {
    throw ConfigError(fmt::format("--trace {}: that is where the run writes its schedule picture; choose another path",
                                  trace_target.string()));
  }
  std::error_code no_out;
  if (std::filesystem::is_directory(out.dir, no_out)) check_output_target(picture, "schedule picture");
  check_not_input(picture, inputs, "schedule picture");
}

}  // namespace

TogetherResult Session::run_together(const std::vector<const Model*>& models, ContextSchedule schedule,
                                     const std::optional<RunOutputs>& outputs) {
  if (models.empty()) throw ConfigError("run_together: no models");
  if (!config_.split.pinned.empty()) {
    throw ConfigError("placement pins name the ops of one model: run the models one at a time to pin them");
  }
  for (const Model* m : models) {
    if (!(m->arch() == models[0]->arch())) {
      throw ConfigError(fmt::format(
          "the models share one machine but {} names arch '{}' and {} names '{}'; choose one arch for the run "
          "(--arch)",
          models[0]->origin(), models[0]->arch().name, m->origin(), m->arch().name));
    }
  }
  for (const Model* m : models) {
    if (m->fusion() != nullptr && m->contexts() < models.size()) {
      throw ConfigError(fmt::format(
          "{} was loaded for {} model(s) on the machine, and its fused kernels fit that share of the local store; "
          "load each model with contexts={} to run {} models together",
          m->origin().empty() ? "model '" + m->name() + "'" : m->origin(), m->contexts(), models.size(),
          models.size()));
    }
  }
  std::uint64_t host_bytes = 0;
  for (const Model* m : models) host_bytes += m->host_memory_bound();
  check_host_memory(host_bytes, "the models");
  TogetherResult together;
  together.names = model_names(models);
  const Arch& arch = models[0]->arch();
  const bool pipelined = schedule == ContextSchedule::kPipelined;
  const char* schedule_name = pipelined ? "pipelined" : "sequential";
  std::vector<std::string> origins;
  std::vector<std::filesystem::path> inputs;
  for (const Model* m : models) {
    origins.push_back(valid_utf8(m->origin()));  // for JSON: a path's bytes need not be UTF-8
    inputs.insert(inputs.end(), m->files_read().begin(), m->files_read().end());
  }
  const nlohmann::json run_info = {{"workload", fmt::format("{}", fmt::join(together.names, "+"))},
                                   {"workloads", origins},
                                   {"models", together.names},
                                   {"schedule", schedule_name}};
  std::unique_ptr<RunDirectory> top;
  std::vector<std::unique_ptr<RunDirectory>> dirs(models.size());
  if (outputs) {
    check_together_outputs(*outputs, config_.machine.trace, together.names, models, inputs);
    const std::filesystem::path trace_option = outputs->trace;
    top = std::make_unique<RunDirectory>(outputs->dir.string(), config_.machine.trace ? &trace_option : nullptr,
                                         std::vector<std::string>{}, run_info, inputs);
    for (std::size_t k = 0; k < models.size(); ++k) {  // OUT is this run's (its lock): no lock of their own
      dirs[k] = std::make_unique<RunDirectory>(
          (top->dir() / together.names[k]).string(), nullptr, output_names(models[k]->graph()),
          nlohmann::json{{"workload", origins[k]}, {"model", together.names[k]}}, inputs, /*lock=*/false);
    }
  }

  ConcurrentMachine node(arch, together.names, config_.machine);
  if (config_.check.any()) {
    for (std::size_t k = 0; k < models.size(); ++k) enable_checks(node.context(k), config_.check);
  }
  together.results.resize(models.size());
  std::vector<Cycle> starts(models.size(), 0);
  std::vector<std::function<void(Machine&)>> programs;
  for (std::size_t k = 0; k < models.size(); ++k) {
    programs.emplace_back([this, &together, &starts, &models, k](Machine& machine) {
      starts[k] = machine.stats().cycles;
      ExecuteOptions options;
      options.split = split_for(config_, models[k]->format());
      options.staging = models[k]->staging();
      ExecutionResult executed = execute(models[k]->graph(), models[k]->plan(), machine, options);
      RunResult& result = together.results[k];
      result.stats = std::move(executed.stats);
      add_run_layer_metrics(result.stats, Roofline::of(machine.arch()), {});  // per-layer ldm: single-model runs only
      add_source_layers(result.stats, *models[k]);
      result.ops = std::move(executed.ops);
      result.summary = std::move(executed.summary);
      result.host_times = std::move(executed.host_times);
      for (auto& [name, values] : executed.outputs) {
        result.outputs[name] = TensorValues{executed.shapes.at(name).dims_vector(), SharedHalves(std::move(values)),
                                            executed.types.at(name)};
      }
    });
  }
  keep_heap();  // the launches' buffers stay faulted in, this run and the next
  together.errors = node.run(programs, pipelined ? ContextSchedule::kPipelined : ContextSchedule::kSequential);

  together.summary = {{"tool_version", version()}, {"arch", arch.name}, {"schedule", schedule_name}};
  together.summary["models"] = nlohmann::json::array();
  std::optional<std::size_t> first_failure;
  for (std::size_t k = 0; k < models.size(); ++k) {
    const Machine& machine = node.context(k);
    RunResult& result = together.results[k];
    const std::exception_ptr& error = together.errors[k];
    if (error && !first_failure) first_failure = k;
    const std::optional<Fault> fault = error ? fault_of(error) : std::nullopt;
    nlohmann::json entry = {{"name", together.names[k]}, {"workload", origins[k]}, {"start_cycle", starts[k]}};
    const Cycle end = machine.stats().cycles;
    entry["end_cycle"] = end;
    entry["cycles"] = end - starts[k];
    entry["status"] = !error ? "ok" : fault ? "fault" : "error";
    entry["fault"] = fault ? fault_json(*fault) : nlohmann::json(nullptr);
    if (error) entry["error"] = error_text(error);
    if (!error) {
      result.stats["start_cycle"] = starts[k];
    } else {
      result.stats = machine.stats().to_json();  // a failed model's record: what the machine did up to it
      result.stats["workload"] = origins[k];
      if (!fault) result.stats["error"] = error_text(error);
    }
    if (config_.check.any()) {  // each model's reports, also those of a model that trapped (up to its fault)
      result.stats["check"] = check_reports_json(check_reports(machine));
      entry["check"] = result.stats["check"];
    }
    together.summary["models"].push_back(entry);
    if (!dirs[k]) continue;
    if (!error) {
      for (const auto& [name, tensor] : result.outputs)
        write_npy(dirs[k]->npy(name), tensor.shape, tensor.dtype, tensor.values.span());
      write_file_atomically(dirs[k]->host_times(), result.host_times.dump(2) + "\n", "host times file");
    } else {
      dirs[k]->remove_stale_outputs(output_names(models[k]->graph()));
    }
    write_run_record(*dirs[k], result.stats, nlohmann::json(nullptr), fault ? &*fault : nullptr, {});
    dirs[k]->complete();
  }
  together.stats = node.stats();
  const ConcurrentStats& stats = together.stats;
  together.summary["machine"] = stats.to_json();
  if (top) {
    write_file_atomically(top->stats(), together.summary.dump(2) + "\n", "stats file");
    write_file_atomically(
        top->dir() / "schedule.svg",
        schedule_svg(
            node.schedule(), dma_waits(node), stats.makespan, together.names,
            fmt::format("{} models on {}, {}: {} cycles{}", models.size(), arch.name, schedule_name, stats.makespan,
                        stats.schedule_compactions() > 0 ? " (long run: short spans merged)" : "")),
        "schedule picture");
    if (!top->trace().empty()) {
      nlohmann::json fault = nullptr;
      if (first_failure) {
        if (auto f = fault_of(together.errors[*first_failure])) fault = fault_json(*f);
      }
      nlohmann::json header = {{"run", run_info}, {"fault", fault}};
      if (config_.check.any()) header["check"] = models_check_reports(together.summary["models"]);
      node.write_trace(top->trace(), header);
    }
    top->complete();
  }
  return together;
}

}  // namespace ldmsim
