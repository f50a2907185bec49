// `ldmsim import MODEL.onnx -o DIR`: writes the model as a workload (DIR/NAME.json, docs/workload-format.md) and
// its constants and given inputs as .npy files beside it, so a model can be read and edited as a workload.
#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/frontends/onnx_import.hpp"
#include "ldmsim/session/directory_lock.hpp"
#include "ldmsim/session/model_reader.hpp"
#include "ldmsim/session/run_directory.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/output_file.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "model_flags.hpp"

namespace ldmsim::cli {
namespace {

struct ImportOptions {
  std::string model;
  std::string out;
  std::vector<std::string> inputs;
};

void import_command(const ImportOptions& options) {
  if (model_reader_for(options.model).format() != "onnx") {
    throw ConfigError(
        fmt::format("{}: not an ONNX model (import translates ONNX models into workloads)", options.model));
  }
  OnnxImportOptions import;
  import.inputs = input_files(options.inputs);
  const ImportedModel imported = import_onnx(options.model, import);
  for (const ImportNote& note : imported.notes) fmt::print(stderr, "ldmsim: note: {}\n", terminal_safe(note.text));
  const std::filesystem::path dir(options.out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw ConfigError(fmt::format("{}: cannot create the output directory: {}", dir.string(), ec.message()));
  }
  const std::string workload_file = imported.workload["name"].get<std::string>() + ".json";
  // Into a run directory only while no run owns it (held until every file is written).
  const DirectoryLock lock = lock_run_directory_of(dir / workload_file, "ldmsim import", "-o");
  // Every name is checked before anything is written.
  check_output_name(workload_file, "workload file");
  for (const auto& [file, array] : imported.arrays) {
    check_output_name(file, "tensor file");
    check_output_target(dir / file, "tensor file");
  }
  check_output_target(dir / workload_file, "workload file");
  std::vector<std::filesystem::path> inputs = {options.model};
  for (const auto& [name, file] : import.inputs) inputs.push_back(file);
  for (const auto& [file, array] : imported.arrays) check_not_input(dir / file, inputs, "tensor file");
  check_not_input(dir / workload_file, inputs, "workload file");
  for (const auto& [file, array] : imported.arrays) {
    if (array.dtype == "f4") {
      write_npy(dir / file, array.shape, array.data);
    } else if (array.is_integral()) {
      write_npy(dir / file, array.shape, array.dtype == "b1" ? DType::kBool : DType::kI32,
                words_to_units(array.integers));
    } else {
      write_npy(dir / file, array.shape, array.halves.span());
    }
  }
  write_file_atomically(dir / workload_file, imported.workload.dump(2) + "\n", "workload file");
  fmt::print("wrote {} ({} ops) and {} tensor file(s) to {}\n", workload_file, imported.workload["ops"].size(),
             imported.arrays.size(), dir.string());
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* cmd =
      app.add_subcommand("import", "Translate an ONNX model into a workload JSON and .npy tensors (docs/onnx.md)");
  cmd->add_option("model", options->model, "ONNX model file (.onnx)")->required();
  cmd->add_option("-o,--out", options->out, "Output directory (created if missing)")->required();
  cmd->add_option("--input", options->inputs, "Values of a graph input: NAME=FILE.npy (repeatable)")
      ->allow_extra_args(false);
  add_examples(
      cmd,
      "Examples:\n  ldmsim import models/tiny_cnn.onnx -o tiny_cnn\n  ldmsim run tiny_cnn/tiny_cnn.json   the imported "
      "workload (NAME.json, NAME: the model's graph name)");
  cmd->callback([options] { import_command(*options); });
}

}  // namespace ldmsim::cli
