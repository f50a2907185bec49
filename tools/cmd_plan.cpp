// `ldmsim plan WORKLOAD.json|MODEL.onnx [--arch A] [--staging S] [--fusion on|off] [--conv-algo ALGO]
// [--input NAME=FILE.npy] [--json | --json-file FILE]`: every tensor's static and dynamic tags (docs/tags.md) for the
// plan `ldmsim run` would follow, without running anything.
#include <fmt/format.h>

#include "commands.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/placement_choice.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/graph/tags.hpp"
#include "ldmsim/session/directory_lock.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "model_flags.hpp"

namespace ldmsim::cli {
namespace {

struct PlanOptions {
  std::string workload;
  ModelFlags model;
  bool json = false;
  bool json_file_given = false;
  std::string json_file;
};

void plan_command(const PlanOptions& options) {
  Session session(options.model.config());
  const Model model = session.load(options.workload, options.model.read_options());  // checks what `run` checks
  print_notes(model);
  const Model* w = &model;
  check_host_memory(w->host_memory_bound(), fmt::format("workload '{}'", w->graph().name));  // as `run`
  const SplitOptions split_options = split_for(options.model.config(), w->format());
  // Priced on as many host threads as `run` would give the machine by default (the plan is the same on any number).
  const unsigned threads = machine_threads(MachineOptions{}, w->arch());
  const SplitPlan split = plan_split(w->graph(), w->arch(), split_options, &w->plan(), nullptr, threads);
  const std::vector<TensorTags> tags = tensor_tags(w->loaded_graph(), w->graph(), w->plan(), &split);
  if (options.json || options.json_file_given) {
    nlohmann::json doc = {{"workload", w->loaded_graph().name},
                          {"arch", w->arch().name},
                          {"staging", std::string(to_string(w->staging()))},
                          {"fusion", options.model.fusion == "on"},
                          {"memories", w->arch().core_groups},
                          {"cores_per_group", w->arch().cores_per_group()},
                          {"split", split.to_json()},
                          {"tensors", nlohmann::json::array()}};
    for (const TensorTags& t : tags) doc["tensors"].push_back(t.to_json());
    // Names come from user files: bytes that are not UTF-8 are replaced, not an error.
    const std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (options.json_file_given) {
      const DirectoryLock lock = lock_run_directory_of(options.json_file, "ldmsim plan", "--json-file");
      check_not_input(options.json_file, w->files_read(), "plan file");
      write_file_atomically(options.json_file, text, "plan file");
      fmt::print("wrote the tags of {} tensors to {}\n", tags.size(), options.json_file);
    } else {
      fmt::print("{}", text);
    }
    return;
  }
  fmt::print("{} on {} ({} memories, {} cores each; staging {}, fusion {}, split {}): {} tensors\n",
             terminal_safe(w->loaded_graph().name), w->arch().name, w->arch().core_groups, w->arch().cores_per_group(),
             to_string(w->staging()), options.model.fusion, split_mode(split_options), tags.size());
  for (const TensorTags& t : tags) {
    fmt::print("{}\n  {}\n  {}\n", terminal_safe(t.name), terminal_safe(t.static_text()),
               terminal_safe(t.dynamic_text()));
  }
  fmt::print("{}", terminal_safe(describe_placements(w->graph(), split)));
  for (const auto& s : split.ops) {
    if (!s) continue;
    const OpNode& op = w->graph().ops()[s->op];
    fmt::print(
        "split {}: {} of {} (D {}{}), mode {}, {} pieces, {}-parallel\n", op.label(), s->axis.rule,
        terminal_safe(w->graph()
                          .tensor(s->axis.operand < op.inputs.size() ? op.inputs[s->axis.operand]
                                                                     : op.outputs[s->axis.operand - op.inputs.size()])
                          .name),
        s->axis.extent, s->padded != s->axis.extent ? fmt::format(", padded to {}", s->padded) : "", s->mode,
        s->pieces.size(), s->parallelism);
    for (std::size_t level = 0; level < s->tree.size(); ++level) {
      std::vector<std::string> pairs;
      for (const ReductionPair& r : s->tree[level])
        pairs.push_back(fmt::format("o{}+o{} ({})", r.left + 1, r.right + 1, r.exchange));
      fmt::print("  reduction level {}: {}\n", level + 1, fmt::join(pairs, ", "));
    }
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Print every tensor's tags (what it is; how the machine holds it) for a workload or ONNX model, "
      "without running it (docs/tags.md)");
  cmd->add_option("workload", options->workload, "Workload JSON file or ONNX model (.onnx)")->required();
  CLI::Option* arch =
      cmd->add_option("--arch", options->model.arch, "Arch preset name or arch JSON file")->capture_default_str();
  cmd->add_option("--staging", options->model.staging, "Staging policy: method (default), naive or none")
      ->check(CLI::IsMember({"method", "naive", "none"}));
  cmd->add_option("--fusion", options->model.fusion, "Plan with fused kernels as `run` does: on or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  add_split_flags(*cmd, options->model.split);
  cmd->add_option("--conv-algo", options->model.conv_algo,
                  "Convolution algorithm for every conv that does not set its own \"algo\" (as for run)")
      ->check(CLI::IsMember({"im2col", "direct", "implicit", "implicit-precomp", "depthwise"}));
  cmd->add_option("--input", options->model.inputs,
                  "An ONNX model's input values: NAME=FILE.npy (repeatable; needed for symbolic dimensions)")
      ->allow_extra_args(false);
  CLI::Option* json = cmd->add_flag("--json", options->json, "Print the tags as JSON instead of text");
  CLI::Option* json_file =
      cmd->add_option("--json-file", options->json_file, "Write the tags as JSON to this file (atomically)")
          ->excludes(json);
  add_examples(cmd, "Example: ldmsim plan models/tiny_cnn.onnx --arch sw26010");
  cmd->callback([options, arch, json_file] {
    options->model.arch_given = arch->count() > 0;
    options->json_file_given = json_file->count() > 0;
    plan_command(*options);
  });
}

}  // namespace ldmsim::cli
