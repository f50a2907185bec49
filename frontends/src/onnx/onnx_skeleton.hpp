// Private: an ONNX model read once, its large fp32 weights rounded to fp16 on the way, so that protobuf parses only
// the rest (the "skeleton": nodes, names, shapes, small tensors). Parsed whole, protobuf copies every weight into a
// string of its own: a second pass over the file's size in fresh memory, and the fp16 rounding a third
// (docs/benchmarks.md "Weights rounded while the model is read").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/sim/fp16.hpp"

namespace ldmsim::onnx_import {

/// An initializer's fp32 raw data, left out of the skeleton and rounded to fp16 while the file was read.
struct StreamedWeight {
  std::size_t initializer = 0;  ///< index among the graph's initializers
  std::uint64_t offset = 0;     ///< of its fp32 bytes in the file (a fold re-reads them exactly)
  std::uint64_t bytes = 0;
  SharedHalves halves;  ///< the values rounded to fp16 (nearest even)
  /// Its values beyond fp16's range saturated to +-65504 (counted by whichever thread rounded each part; read once
  /// the walk's read() returned, when every part is done).
  std::shared_ptr<std::atomic<std::uint64_t>> saturated = std::make_shared<std::atomic<std::uint64_t>>(0);
  bool taken = false;                 ///< `halves` went to a constant's array
  int fd = -1;                        ///< the model file, open while the import runs
  const std::string* file = nullptr;  ///< its name, for errors
};

struct ModelSkeleton {
  std::string bytes;                    ///< the model file without the streamed weights' raw data
  std::vector<StreamedWeight> weights;  ///< in initializer order
};

/// The skeleton grows no larger than this; a model with more outside its fp32 weights (float_data, int64 or
/// double tensors) is parsed from the file as before, holding one copy of it instead of two.
inline constexpr std::uint64_t kMaxSkeletonBytes = std::uint64_t{64} << 20;

/// Reads the model in `fd` (a regular file of `size` bytes, read with pread: the descriptor's offset stays put)
/// and streams the raw data of each initializer of its graph whose data type, given before it, is FLOAT and which
/// holds at least `min_bytes` (a multiple of 4). nullopt when the file is anything this walk does not follow
/// exactly as protobuf would (malformed, a second graph or raw_data field, groups, a read error, a skeleton over
/// kMaxSkeletonBytes): protobuf then parses the whole file and gives its own verdict.
/// `file` names the model in errors; it must outlive the weights. `threads` host threads (the caller's and
/// `threads - 1` more) round the largest weights, each a part of every one.
std::optional<ModelSkeleton> read_model_skeleton(int fd, std::uint64_t size, std::uint64_t min_bytes,
                                                 const std::string& file, unsigned threads = 1);

/// The exact fp32 values of `w`, read from the model file again, as f(index, value); ConfigError naming the file
/// when they cannot be read (it changed during the import).
void read_streamed_floats(const StreamedWeight& w, const std::function<void(std::size_t, float)>& f);

}  // namespace ldmsim::onnx_import
