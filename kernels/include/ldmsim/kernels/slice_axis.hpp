// ONNX Slice's arithmetic on one axis, shared by the slice op and the importer's fold of a constant Slice, so both
// clamp and count alike.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ldmsim {

/// The elements Slice takes from one axis: the first index, how many, and the step between them (1 when at most
/// one element is taken: any step serves then).
struct SliceAxis {
  std::int64_t first = 0;
  std::uint64_t count = 0;
  std::int64_t step = 1;
};

/// ONNX Slice on an axis of `dim` elements with `step` != 0: negative start and end count from the end, and
/// the bounds are clamped to [0, dim] stepping forward, [-1, dim - 1] stepping backward. Any int64 values are
/// handled without overflow (ends of INT64_MAX and steps of INT64_MIN included).
inline SliceAxis slice_axis(std::int64_t start, std::int64_t end, std::int64_t step, std::uint64_t dim) {
  if (dim == 0) return {};  // nothing to take (a constant may have an empty axis)
  const auto d = static_cast<std::int64_t>(dim);
  // Negative counts from the end; anything below -dim acts as -1 (clamping treats every such value alike).
  const auto absolute = [d](std::int64_t v) { return v >= 0 ? v : (v < -d ? -1 : v + d); };
  std::int64_t b = absolute(start), e = absolute(end);
  if (step > 0) {
    b = std::clamp<std::int64_t>(b, 0, d);
    e = std::clamp<std::int64_t>(e, 0, d);
  } else {
    b = std::clamp<std::int64_t>(b, 0, d - 1);
    e = std::clamp<std::int64_t>(e, -1, d - 1);
  }
  const std::int64_t distance = step > 0 ? e - b : b - e;  // at most dim + 1
  const std::uint64_t magnitude = step > 0 ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
  SliceAxis a;
  a.first = b;
  a.count = distance <= 0 ? 0 : (static_cast<std::uint64_t>(distance) - 1) / magnitude + 1;
  a.step = a.count <= 1 ? 1 : step;
  return a;
}

}  // namespace ldmsim
