// The ONNX front end: a model (opsets 11 to 17, parsed with Debian's ONNX protobuf library) translated into the
// documented workload format (docs/workload-format.md), so everything downstream — the graph, its passes, the
// executor, `ldmsim import`'s files — is the same as for a JSON workload. Every problem is found before anything
// runs: a corrupt file, an unsupported opset, and every unsupported node (name, index, op type, what) at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/kernels/operator.hpp"

namespace ldmsim {

/// Largest .onnx file read (protobuf's own message limit is 2 GiB).
inline constexpr std::uint64_t kMaxOnnxFileBytes = std::uint64_t{1} << 30;

/// Smallest fp32 initializer streamed by default: larger than the ones decoded as soon as they are read (shapes,
/// scalars), which stay in protobuf's copy.
inline constexpr std::uint64_t kDefaultStreamedWeightBytes = 4097 * 4;
inline constexpr std::uint64_t kNoStreamedWeights = ~std::uint64_t{0};

struct OnnxImportOptions {
  /// Graph input name -> .npy file with its values (f2 or f4; f4 is rounded to fp16 when staged).
  std::map<std::string, std::filesystem::path> inputs;
  /// Inputs without a file get normal(0, 1) values from this seed (and a note says so).
  std::uint64_t seed = 1;
  /// fp32 initializers of at least this many bytes of raw data are rounded to fp16 as the file is read, outside
  /// protobuf: the same values, in half the memory and less time (docs/onnx.md). kNoStreamedWeights: protobuf
  /// reads every tensor (the results are the same).
  std::uint64_t streamed_weight_min_bytes = kDefaultStreamedWeightBytes;
  /// Host threads that round the largest streamed weights (the caller's and `threads - 1` more, each a part of
  /// every such weight; 0 counts as 1). The values are the same on any number.
  unsigned threads = 1;
};

/// Something the import decided for the user.
struct ImportNote {
  std::string text;
  /// The graph input (its tensor name) whose values the note is about (random values, rounding); empty when it is
  /// about the model. A run given that input's values at run time makes it untrue.
  std::string input;
};

/// The note on input `input` given as f32 values: they were rounded to fp16.
std::string rounded_input_note(std::string_view input);

/// A model in the workload format. Tensor names are ONNX's made file-safe (docs/onnx.md); constants and given
/// inputs are {"file": NAME.npy} inits whose contents are in `arrays`.
struct ImportedModel {
  nlohmann::json workload;
  std::map<std::string, NpyArray> arrays;  ///< file name -> values (constants rounded to fp16 already)
  std::vector<ImportNote> notes;           ///< what the import decided for the user (random inputs, rounding)
  /// fp32 initializers rounded to fp16 as the file was read (OnnxImportOptions::streamed_weight_min_bytes); 0 when
  /// protobuf parsed the whole file.
  std::size_t streamed_weights = 0;
};

/// Reads and translates `file`, binding its ops with `registry` as it goes (the shapes folds need); ConfigError naming
/// the file and what is wrong otherwise. Load the result with the same registry.
ImportedModel import_onnx(const std::filesystem::path& file, const OnnxImportOptions& options,
                          const OperatorRegistry& registry);
/// import_onnx with the built-in operators.
ImportedModel import_onnx(const std::filesystem::path& file, const OnnxImportOptions& options = {});

}  // namespace ldmsim
