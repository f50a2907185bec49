// `ldmsim run A B ... [--concurrent]`: several models (workload JSON or ONNX files) on one machine, each in its own
// context (docs/pipelining.md). Sequential by default, pipelined with --concurrent. Writes each model's outputs and
// stats.json to OUT/NAME/, and OUT/stats.json (the machine's makespan, busy and idle core-cycles, switches), the
// schedule picture OUT/schedule.svg and the node's trace. A model that traps keeps its fault; the others finish.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "layer_table.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/ldmsim.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "run_directory.hpp"
#include "schedule_svg.hpp"
#include "workload_loading.hpp"

namespace ldmsim::cli {

namespace {

constexpr std::size_t kNameLength = 40;

/// A model's name: its file's stem, made a safe directory name, made unique with "-2", "-3", ...
std::vector<std::string> model_names(const std::vector<std::string>& workloads) {
  std::vector<std::string> names;
  std::set<std::string> taken = {kIncompleteMarker};  // a directory of that name would be the run marker
  for (const auto& workload : workloads) {
    std::string stem = std::filesystem::path(workload).stem().string();
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

struct Model {
  std::string name;
  std::string workload;
  std::unique_ptr<LoadedWorkload> loaded;
  std::optional<ExecutionPlan> plan;
  std::vector<std::string> outputs;
  std::unique_ptr<RunDirectory> dir;
  ExecutionResult result;
  Cycle start = 0;
  std::exception_ptr error;
};

/// A model's directory inside --out must be missing or a real directory: a symlink (or a file) in its place would
/// send the model's files outside --out.
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

std::optional<Fault> fault_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Fault& fault) {
    return fault;
  } catch (...) {
    return std::nullopt;
  }
}

/// Writes a model's outputs (or, when it failed, its stats with the fault and none of its .npy files).
nlohmann::json finish_model(Model& m, const Machine& machine) {
  nlohmann::json summary = {{"name", m.name}, {"workload", m.workload}, {"start_cycle", m.start}};
  const Cycle end = machine.stats().cycles;
  summary["end_cycle"] = end;
  summary["cycles"] = end - m.start;
  if (!m.error) {
    for (const auto& [name, values] : m.result.outputs) {
      write_npy(m.dir->npy(name), m.result.shapes.at(name).dims_vector(), values);
    }
    m.result.stats["tool_version"] = LDMSIM_VERSION;
    m.result.stats["start_cycle"] = m.start;
    write_file_atomically(m.dir->stats(), m.result.stats.dump(2) + "\n", "stats file");
    write_file_atomically(m.dir->host_times(), m.result.host_times.dump(2) + "\n", "host times file");
    summary["status"] = "ok";
    summary["fault"] = nullptr;
  } else {
    nlohmann::json stats = machine.stats().to_json();
    stats["tool_version"] = LDMSIM_VERSION;
    stats["workload"] = m.workload;
    const std::optional<Fault> fault = fault_of(m.error);
    stats["fault"] = fault ? fault_json(*fault) : nlohmann::json(nullptr);
    if (!fault) stats["error"] = error_text(m.error);
    m.dir->remove_stale_outputs(m.outputs);
    write_file_atomically(m.dir->stats(), stats.dump(2) + "\n", "stats file");
    summary["status"] = fault ? "fault" : "error";
    summary["fault"] = stats["fault"];
    summary["error"] = error_text(m.error);
  }
  m.dir->complete();
  return summary;
}

}  // namespace

void run_models_command(const WorkloadRunArgs& args, const std::vector<std::string>& workloads, bool pipelined) {
  if (!args.inputs.empty() && workloads.size() > 1) {
    throw ConfigError(
        "--input gives one ONNX model's inputs; with several models, run each model's inputs from its "
        "own workload, or run the models one at a time");
  }
  const OperatorRegistry registry = OperatorRegistry::builtin();
  const std::vector<std::string> names = model_names(workloads);
  std::vector<Model> models(workloads.size());
  for (std::size_t k = 0; k < workloads.size(); ++k) {
    Model& m = models[k];
    m.name = names[k];
    m.workload = valid_utf8(workloads[k]);  // for JSON: a path's bytes need not be UTF-8
    m.loaded = load_for_run(LoadArgs{workloads[k], args.arch, args.arch_given, args.staging, args.fusion,
                                     args.conv_algo, args.inputs, workloads.size()},
                            registry);
    if (!(m.loaded->arch == models[0].loaded->arch)) {
      throw ConfigError(
          fmt::format("the models share one machine but {} names arch '{}' and {} names '{}'; choose "
                      "one with --arch",
                      workloads[0], models[0].loaded->arch.name, workloads[k], m.loaded->arch.name));
    }
    m.plan.emplace(plan_execution(m.loaded->graph(), m.loaded->policy));
    check_runnable(m.loaded->graph(), *m.plan, m.loaded->arch);
    for (std::size_t t : m.loaded->graph().outputs()) m.outputs.push_back(m.loaded->graph().tensor(t).name);
    if (args.dump_graph) fmt::print("{}:\n{}", m.name, terminal_safe(describe(m.loaded->graph(), *m.plan)));
  }
  std::uint64_t host_bytes = 0;
  for (const Model& m : models) host_bytes += host_memory_bound(m.loaded->graph(), *m.plan);
  check_host_memory(host_bytes, "the models");
  const Arch& arch = models[0].loaded->arch;
  ConcurrentMachine node(arch, names, args.machine);
  const std::filesystem::path trace_target =
      args.trace.empty() ? std::filesystem::path(args.out) / "trace.ldmtrace" : std::filesystem::path(args.trace);
  for (const Model& m : models) {  // refused before anything is written
    const std::filesystem::path dir = std::filesystem::path(args.out) / m.name;
    check_model_directory(dir, m.name);
    for (const auto& output : m.outputs) check_output_name(output, "output tensor");
    if (args.machine.trace && (path_inside(trace_target, dir) || same_file_path(trace_target, dir))) {
      throw ConfigError(fmt::format("--trace {}: that is inside model {}'s output directory {}; choose another path",
                                    trace_target.string(), m.name, dir.string()));
    }
  }
  if (args.machine.trace && same_file_path(trace_target, std::filesystem::path(args.out) / "schedule.svg")) {
    throw ConfigError(fmt::format("--trace {}: that is where the run writes its schedule picture; choose another path",
                                  trace_target.string()));
  }

  const char* schedule = pipelined ? "pipelined" : "sequential";
  std::vector<std::string> workload_paths;
  for (const Model& m : models) workload_paths.push_back(m.workload);
  const nlohmann::json run_info = {{"workload", fmt::format("{}", fmt::join(names, "+"))},
                                   {"workloads", workload_paths},
                                   {"models", names},
                                   {"schedule", schedule}};
  const std::filesystem::path trace_option(args.trace);
  const std::filesystem::path picture = std::filesystem::path(args.out) / "schedule.svg";
  std::error_code no_out;
  if (std::filesystem::is_directory(args.out, no_out)) check_output_target(picture, "schedule picture");
  std::vector<std::filesystem::path> inputs;
  for (const Model& m : models) inputs.insert(inputs.end(), m.loaded->inputs.begin(), m.loaded->inputs.end());
  check_not_input(picture, inputs, "schedule picture");
  RunDirectory top(args.out, args.machine.trace ? &trace_option : nullptr, {}, run_info, inputs);
  for (Model& m : models) {  // OUT is this run's (its lock): the models' directories need no lock of their own
    m.dir = std::make_unique<RunDirectory>((top.dir() / m.name).string(), nullptr, m.outputs,
                                           nlohmann::json{{"workload", m.workload}, {"model", m.name}}, inputs,
                                           /*lock=*/false);
  }

  std::vector<std::function<void(Machine&)>> programs;
  for (Model& m : models) {
    programs.emplace_back([&m, &args](Machine& machine) {
      m.start = machine.stats().cycles;
      ExecuteOptions options;
      options.split = args.split;
      options.staging = m.loaded->policy;
      m.result = execute(m.loaded->graph(), *m.plan, machine, options);
    });
  }
  const std::vector<std::exception_ptr> outcome =
      node.run(programs, pipelined ? ContextSchedule::kPipelined : ContextSchedule::kSequential);

  nlohmann::json summary = {{"tool_version", LDMSIM_VERSION}, {"arch", arch.name}, {"schedule", schedule}};
  summary["models"] = nlohmann::json::array();
  std::optional<std::size_t> first_failure;
  for (std::size_t k = 0; k < models.size(); ++k) {
    models[k].error = outcome[k];
    if (outcome[k] && !first_failure) first_failure = k;
    summary["models"].push_back(finish_model(models[k], node.context(k)));
  }
  const ConcurrentStats stats = node.stats();
  summary["machine"] = stats.to_json();
  write_file_atomically(top.stats(), summary.dump(2) + "\n", "stats file");
  write_file_atomically(
      picture,
      schedule_svg(node.schedule(), stats.makespan, names,
                   fmt::format("{} models on {}, {}: {} cycles{}", models.size(), arch.name, schedule, stats.makespan,
                               stats.schedule_compactions() > 0 ? " (long run: short spans merged)" : "")),
      "schedule picture");
  if (!top.trace().empty()) {
    nlohmann::json fault = nullptr;
    if (first_failure) {
      if (auto f = fault_of(outcome[*first_failure])) fault = fault_json(*f);
    }
    node.write_trace(top.trace(), {{"run", run_info}, {"fault", fault}});
  }
  top.complete();

  Cycle cores = 0;
  for (const auto& group : stats.groups) cores += group.size();
  const double idle_share = stats.makespan == 0 ? 0.0
                                                : 100.0 * static_cast<double>(stats.idle_core_cycles()) /
                                                      static_cast<double>(stats.makespan * cores);
  fmt::print(
      "{} models on {}, {}: {} cycles = {:.4g} us simulated; busy {} core-cycles, idle {} ({:.1f}%), {} "
      "context switches ({} cycles)\n",
      models.size(), arch.name, schedule, stats.makespan, static_cast<double>(stats.makespan) / arch.clock_hz * 1e6,
      stats.busy_cycles(), stats.idle_core_cycles(), idle_share, stats.switches(), stats.switch_cycles());
  fmt::print("  {:<24} {:>12} {:>12} {:>12}  {}\n", "model", "start", "end", "cycles", "status");
  for (const auto& m : summary["models"]) {
    fmt::print("  {:<24} {:>12} {:>12} {:>12}  {}\n", m["name"].get<std::string>(), m["start_cycle"].get<Cycle>(),
               m["end_cycle"].get<Cycle>(), m["cycles"].get<Cycle>(), m["status"].get<std::string>());
  }
  if (args.explain) {
    for (const Model& m : models) {
      if (!m.error) fmt::print("{}", terminal_safe(op_choices_text(m.result.stats)));
    }
  }
  fmt::print("wrote {}, {}{} and each model's outputs in {}/NAME/\n", top.stats().string(), picture.string(),
             top.trace().empty() ? "" : ", " + top.trace().string(), top.dir().string());
  if (first_failure) {
    fmt::print(stderr, "ldmsim: model {} failed: {}\n", models[*first_failure].name,
               terminal_safe(error_text(outcome[*first_failure])));
    std::rethrow_exception(outcome[*first_failure]);
  }
}

}  // namespace ldmsim::cli
