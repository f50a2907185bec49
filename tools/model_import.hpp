// What `run MODEL.onnx` and `import MODEL.onnx` share: the --input NAME=FILE.npy options and the import itself.
#pragma once

#include <string>
#include <vector>

#include "ldmsim/frontends/onnx_import.hpp"

namespace ldmsim::cli {

/// True when `path` names an ONNX model (by its .onnx extension).
bool is_onnx_model(const std::string& path);

/// Imports `model` with the given --input values ("NAME=FILE.npy" each; ConfigError for a malformed one or a name
/// given twice) and prints the import's notes to stderr.
ImportedModel import_model(const std::string& model, const std::vector<std::string>& inputs);

}  // namespace ldmsim::cli
