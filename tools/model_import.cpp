// The ONNX import shared by `run` and `import` (see model_import.hpp).
#include "model_import.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include "heap_prefault.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/utf8.hpp"

namespace ldmsim::cli {

bool is_onnx_model(const std::string& path) {
  return std::filesystem::path(path).extension() == ".onnx";
}

namespace {

/// Bytes a regular file holds on disk (a sparse file's holes not counted); 0 when it cannot be read (the importer
/// reports why).
std::uint64_t stored_bytes(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return std::min(static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_blocks) * 512);
}

}  // namespace

ImportedModel import_model(const std::string& model, const std::vector<std::string>& inputs,
                           std::function<void(const std::atomic<bool>& stop)> meanwhile) {
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
  ImportedModel imported = [&] {
    // The import allocates about half the file's size: its fp32 weights rounded to fp16 as they are read.
    const HeapPrefault prefault(stored_bytes(model) / 2, std::move(meanwhile));
    return import_onnx(model, options);
  }();
  for (const std::string& note : imported.notes) fmt::print(stderr, "ldmsim: note: {}\n", terminal_safe(note));
  return imported;
}

}  // namespace ldmsim::cli
