// The front ends a Session reads models with, chosen by a file's content (its first bytes), not by its name: a
// workload JSON starts with '{', an ONNX model is a protobuf ModelProto. One table, so every command and the Python
// bindings accept the same files.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/frontends/onnx_import.hpp"
#include "ldmsim/graph/graph.hpp"

namespace ldmsim {

struct ModelReadOptions {
  /// Graph input name -> .npy file with its values (an ONNX model's inputs; a workload declares its own).
  std::map<std::string, std::filesystem::path> input_files;
  /// Attributes every op of a type gets unless it sets them (e.g. {"conv": {"algo": "direct"}}).
  std::map<std::string, nlohmann::json> default_attrs;
  /// Work for the import's helper thread once its heap is populated (an ONNX model's import).
  std::function<void(const std::atomic<bool>& stop)> while_importing;
  /// Host threads an ONNX import rounds its largest weights on (OnnxImportOptions::threads). 0: as many as the
  /// run's machine has, for a Session's load of a model for one context; else 1.
  unsigned threads = 0;
};

struct ReadModel {
  Graph graph;
  std::vector<ImportNote> notes;
  /// The files read (the model, its .npy tensors, input files).
  std::vector<std::filesystem::path> files_read;
  /// Seconds of the front end's own parsing (an ONNX import), before the graph was built.
  double import_seconds = 0;
};

class ModelReader {
 public:
  virtual ~ModelReader() = default;
  /// "workload-json" or "onnx".
  virtual std::string_view format() const = 0;
  /// What a user calls files of this format, for messages ("a workload JSON (docs/workload-format.md)").
  virtual std::string_view description() const = 0;
  /// Whether a file starting with `head` (up to 64 bytes; fewer when the file is shorter) is of this format.
  virtual bool recognizes(std::span<const std::uint8_t> head) const = 0;
  /// Reads `file`; ConfigError naming the file and what is wrong.
  virtual ReadModel read(const std::filesystem::path& file, const ModelReadOptions& options,
                         const OperatorRegistry& registry) const = 0;
};

/// The reader for `file` by its content; ConfigError naming the file (missing, not a regular file, or of no
/// known format, with the formats listed).
const ModelReader& model_reader_for(const std::filesystem::path& file);
/// Every known reader.
std::span<const ModelReader* const> model_readers();

}  // namespace ldmsim
