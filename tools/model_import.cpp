// The ONNX import shared by `run` and `import` (see model_import.hpp).
#include "model_import.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim::cli {

bool is_onnx_model(const std::string& path) {
  return std::filesystem::path(path).extension() == ".onnx";
}

ImportedModel import_model(const std::string& model, const std::vector<std::string>& inputs) {
  OnnxImportOptions options;
  for (const std::string& given : inputs) {
    const auto eq = given.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == given.size()) {
      throw ConfigError(fmt::format("--input {}: expected NAME=FILE.npy", given));
    }
    const std::string name = given.substr(0, eq);
    if (!options.inputs.emplace(name, given.substr(eq + 1)).second) {
      throw ConfigError(fmt::format("--input {}: input '{}' is given twice", given, name));
    }
  }
  ImportedModel imported = import_onnx(model, options);
  for (const std::string& note : imported.notes) fmt::print(stderr, "ldmsim: note: {}\n", note);
  return imported;
}

}  // namespace ldmsim::cli
