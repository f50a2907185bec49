// The front ends a Session reads models with (model_reader.hpp): a workload JSON and an ONNX model.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>

#include "heap_prefault.hpp"
#include "ldmsim/frontends/onnx_import.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/session/model_reader.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"
#include "ldmsim/sim/input_file.hpp"

namespace ldmsim {
namespace {

constexpr std::size_t kHeadBytes = 64;

class WorkloadJsonReader final : public ModelReader {
 public:
  std::string_view format() const override { return "workload-json"; }
  std::string_view description() const override { return "a workload JSON (docs/workload-format.md)"; }
  bool recognizes(std::span<const std::uint8_t> head) const override {
    std::size_t at = 0;
    if (head.size() >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) at = 3;  // a UTF-8 byte order mark
    while (at < head.size() && (head[at] == ' ' || head[at] == '\t' || head[at] == '\n' || head[at] == '\r')) ++at;
    return at < head.size() && head[at] == '{';
  }
  ReadModel read(const std::filesystem::path& file, const ModelReadOptions& options,
                 const OperatorRegistry& registry) const override {
    if (!options.input_files.empty()) {
      throw ConfigError(
          fmt::format("{}: input files give an ONNX model's inputs; a workload JSON declares its own "
                      "(or give the values when running it)",
                      file.string()));
    }
    ReadModel read;
    WorkloadLoadOptions load;
    load.default_attrs = options.default_attrs;
    load.files_read = &read.files_read;
    read.files_read.push_back(file);
    read.graph = load_workload(file, registry, load);
    return read;
  }
};

/// Bytes a regular file holds on disk (a sparse file's holes not counted); 0 when it cannot be read (the importer
/// reports why).
std::uint64_t stored_bytes(const std::filesystem::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return std::min(static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_blocks) * 512);
}

class OnnxReader final : public ModelReader {
 public:
  std::string_view format() const override { return "onnx"; }
  std::string_view description() const override { return "an ONNX model (docs/onnx.md)"; }
  bool recognizes(std::span<const std::uint8_t> head) const override {
    // A ModelProto's first field tag: ir_version (1) first in every exporter's output, but any of its fields may
    // lead. Field numbers 1-8 and 14 take one tag byte; 20 and 25 two.
    if (head.empty()) return false;
    const std::uint8_t tag = head[0];
    const unsigned field = tag >> 3, wire = tag & 7u;
    if ((field == 1 || field == 5) && wire == 0) return true;  // ir_version, model_version
    if (((field >= 2 && field <= 4) || (field >= 6 && field <= 8) || field == 14) && wire == 2) return true;
    return head.size() >= 2 && ((tag == 0xA2 || tag == 0xCA) && head[1] == 0x01);  // training_info, functions
  }
  ReadModel read(const std::filesystem::path& file, const ModelReadOptions& options,
                 const OperatorRegistry& registry) const override {
    OnnxImportOptions import;
    import.inputs = options.input_files;
    import.threads = std::max(1U, options.threads);
    HostStopwatch clock;
    ImportedModel imported = [&] {
      // The import allocates about half the file's size: its fp32 weights rounded to fp16 as they are read.
      const HeapPrefault prefault(stored_bytes(file) / 2, options.while_importing);
      return import_onnx(file, import, registry);  // a user's kinds import their ONNX types
    }();
    ReadModel read;
    read.import_seconds = clock.lap();
    read.notes = std::move(imported.notes);
    read.files_read.push_back(file);
    for (const auto& [name, path] : options.input_files) read.files_read.push_back(path);
    WorkloadLoadOptions load;
    load.default_attrs = options.default_attrs;
    load.arrays = &imported.arrays;
    load.files_read = &read.files_read;
    read.graph = workload_from_json(imported.workload, file.string(), ".", registry,
                                    imported.workload["name"].get<std::string>(), load);
    return read;
  }
};

const WorkloadJsonReader kWorkloadJson;
const OnnxReader kOnnx;
const std::array<const ModelReader*, 2> kReaders = {&kWorkloadJson, &kOnnx};

/// The reader whose files conventionally carry `file`'s extension: it names what is wrong with a file of that name
/// whose content no reader recognises (a truncated or corrupt model).
const ModelReader* reader_by_extension(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".onnx") return &kOnnx;
  if (extension == ".json") return &kWorkloadJson;
  return nullptr;
}

}  // namespace

std::span<const ModelReader* const> model_readers() {
  return kReaders;
}

const ModelReader& model_reader_for(const std::filesystem::path& file) {
  const InputFileDescriptor input(file, "model", kMaxOnnxFileBytes);
  std::array<std::uint8_t, kHeadBytes> head{};
  const std::size_t got = read_at(input.fd(), 0, head.data(), head.size());
  const std::span<const std::uint8_t> first(head.data(), got);
  for (const ModelReader* reader : kReaders) {
    if (reader->recognizes(first)) return *reader;
  }
  if (const ModelReader* by_name = reader_by_extension(file)) return *by_name;
  std::string formats;
  for (const ModelReader* reader : kReaders)
    formats += fmt::format("{}{}", formats.empty() ? "" : " or ", reader->description());
  throw ConfigError(
      fmt::format("{}: {}: not {}", file.string(), got == 0 ? "the file is empty" : "unknown format", formats));
}

}  // namespace ldmsim
