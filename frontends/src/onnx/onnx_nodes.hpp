// Private: ONNX nodes as workload ops (see onnx_import.hpp). One node becomes one op of docs/operators.md, or no
// op at all (Identity, Dropout and Constant only rename or define tensors); a node that cannot be expressed
// returns every reason at once, so the importer can list all unsupported nodes of a model together.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ldmsim/graph/graph.hpp"
#include "onnx_skeleton.hpp"

namespace ldmsim::onnx_import {

/// A tensor whose value is known at import time: an initializer, a Constant node's value or a folded result.
struct Constant {
  std::vector<std::uint64_t> dims;
  /// Float and integer tensors alike (integers exact up to 2^53). A large initializer is not decoded here until a
  /// fold reads it (decode()): weights go straight from the model to fp16 (append_fp16), never through doubles.
  std::vector<double> values;
  bool integer = false;
  bool boolean = false;  ///< a bool tensor (also `integer`): held as bool when an op reads it at run time
  const onnx::TensorProto* source = nullptr;  ///< where undecoded values are (the model outlives the import)
  /// With `source`, when its fp32 raw data was streamed (onnx_skeleton.hpp): the values rounded to fp16, and where
  /// in the model file the exact ones are.
  StreamedWeight* streamed = nullptr;
};

/// Initializers up to this many elements are decoded when read (shape tensors, scalars); larger ones on use.
inline constexpr std::uint64_t kEagerElements = 4096;

/// Decodes `c`'s values from its source if that has not happened yet; false (nothing decoded) for a constant of
/// more than kMaxFoldedElements, which no fold may read.
bool decode(Constant& c);

/// Appends `c`'s values rounded to fp16 (nearest even; finite values beyond fp16's range saturated to +-65504 and
/// counted into `saturated`, float_bytes_to_halves_saturated) to `out`. Values rounded as the model was read were
/// counted then (ModelSkeleton::saturated).
void append_fp16(const Constant& c, std::vector<f16>& out, std::uint64_t& saturated);
/// `c`'s values rounded to fp16 as append_fp16 rounds them. An fp32 source's raw bytes (a model's weights) are
/// converted in place and the result owns them: no fresh buffer, whose first touch costs more than the conversion.
/// That consumes the source's data: `c` is left without values.
SharedHalves take_fp16(Constant& c, std::uint64_t& saturated);

/// What translating a node reads and updates.
struct Context {
  std::int64_t opset = 0;
  std::map<std::string, Constant> constants;                 ///< by ONNX name
  std::map<std::string, std::string> aliases;                ///< an Identity/Dropout output -> the tensor it stands for
  std::map<std::string, std::vector<std::uint64_t>> shapes;  ///< known shapes, from the same sources
  std::uint64_t folded_elements = 0;                         ///< of every constant folded so far
  /// The ops translated so far under their ONNX names: ldmsim's own shape inference gives their outputs' shapes.
  Graph shadow;
  const OperatorRegistry* registry = nullptr;
  /// Graph inputs' element types on the device (float ones are fp16, the others int32 or bool).
  std::map<std::string, DType> input_types;
  /// Every tensor name the model uses anywhere (names made up at import must avoid later nodes' outputs too).
  std::set<std::string> reserved;
  /// Constants of n ones made for InstanceNormalization's layer_norm, by n: shared by every node of that size.
  std::map<std::uint64_t, std::string> unit_scales;
};

/// The element type a constant is held in when an op reads it at run time: bool, int32 or fp16, by its ONNX type.
inline DType constant_dtype(const Constant& c) {
  return c.boolean ? DType::kBool : c.integer ? DType::kI32 : DType::kF16;
}
/// Marks `c` as held in `type` (the inverse of constant_dtype).
inline void hold_as(Constant& c, DType type) {
  c.integer = type != DType::kF16;
  c.boolean = type == DType::kBool;
}
/// The element type of tensor `name` (an ONNX name, resolved) at this point of the import.
DType tensor_dtype(const Context& ctx, const std::string& name);

/// Most elements a folded constant may have (checked before it is computed), and all folded constants of a
/// model together: many small folds of one shared initializer must not add up to gigabytes.
inline constexpr std::uint64_t kMaxFoldedElements = std::uint64_t{1} << 24;
inline constexpr std::uint64_t kMaxFoldedTotalElements = std::uint64_t{1} << 25;
/// Highest rank of a constant (device tensors have at most 6 dims; folds cost elements x rank).
inline constexpr std::size_t kMaxConstantRank = 8;

/// `v` as an int64 when it is a finite whole number of magnitude below 2^62, else nullopt.
std::optional<std::int64_t> exact_integer(double v);
/// `v` as an int64, saturated: an index bound such as Slice's INT64_MAX ("to the end") is beyond what a double
/// holds exactly, and only its side matters.
inline std::int64_t saturated_integer(double v) {
  if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}
/// `axis` in [-rank, rank) made non-negative, or nullopt.
inline std::optional<std::size_t> normalize_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// One node's translation: `op` is {"type", "inputs", "attrs"} with ONNX tensor names (outputs are the node's),
/// an array of such ops each with its "outputs" (a node that becomes several ops), or null when the node needs no
/// op; `problems` says why it cannot be translated (empty when it can).
struct Translation {
  nlohmann::json op;
  std::vector<std::string> problems;
};

/// The tensor an ONNX name stands for after Identity/Dropout removal.
std::string resolve(const Context& ctx, const std::string& name);

/// Translates `node`; Constant nodes add to ctx.constants, Identity/Dropout to ctx.aliases.
Translation translate_node(const onnx::NodeProto& node, Context& ctx);

/// Folds a shape computation into ctx.constants (Shape, Gather, Unsqueeze, Squeeze, Concat, Expand, Cast,
/// ConstantOfShape, Range, and Add/Sub/Mul/Div of constants), or maps Unsqueeze/Squeeze of a runtime tensor to
/// a reshape; nullopt when `node` is none of these and the normal translation applies.
std::optional<Translation> fold_node(const onnx::NodeProto& node, Context& ctx);

/// The values of a TensorProto (float, float16, double, int32 or int64; raw or typed fields), checked against
/// its dims before anything is allocated; nullopt and `problem` set when it cannot be read.
/// `streamed`: the tensor's raw data, left out of the parsed model (an initializer's fp32 weights).
std::optional<Constant> read_tensor(const onnx::TensorProto& tensor, std::string& problem,
                                    StreamedWeight* streamed = nullptr);

}  // namespace ldmsim::onnx_import
