// What `run MODEL.onnx` and `import MODEL.onnx` share: the --input NAME=FILE.npy options and the import itself.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "ldmsim/frontends/onnx_import.hpp"

namespace ldmsim::cli {

/// True when `path` names an ONNX model (by its .onnx extension).
bool is_onnx_model(const std::string& path);

/// Imports `model` with the given --input values ("NAME=FILE.npy" each; ConfigError for a malformed one or a name
/// given twice) and prints the import's notes to stderr. `meanwhile`, when given, runs on the import's helper
/// thread after it has populated the heap, until it returns or the import ends (its flag then set).
ImportedModel import_model(const std::string& model, const std::vector<std::string>& inputs,
                           std::function<void(const std::atomic<bool>& stop)> meanwhile = {});

}  // namespace ldmsim::cli
