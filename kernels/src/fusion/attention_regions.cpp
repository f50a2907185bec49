// Where an attention op's batches lie in its tensors (see attention_regions.hpp).
#include "attention_regions.hpp"

#include <limits>

namespace ldmsim::fusion {

std::optional<BatchRange> batch_range(const Shape& source, const MatrixPlacement& at, std::uint64_t rows,
                                      std::uint64_t cols, std::size_t axis, std::uint64_t b0, std::uint64_t b1) {
  if (axis >= source.rank() || b0 >= b1 || rows == 0 || cols == 0) return std::nullopt;
  const std::uint64_t inner = source.product(axis + 1, source.rank()), extent = source[axis];
  const std::uint64_t step = extent * inner, outer = source.product(0, axis);
  if (inner == 0 || step == 0) return std::nullopt;
  const auto range = [&](std::uint64_t lo, std::uint64_t hi) -> std::optional<std::pair<std::uint64_t, std::uint64_t>> {
    const std::uint64_t x0 = lo / inner, x1 = (hi + inner - 1) / inner;
    if (x1 > extent || x0 >= x1) return std::nullopt;
    return std::pair{x0, x1};
  };
  const std::uint64_t first = at.offset + b0 * at.batch;
  // Nothing outside the axis: a range of it is one block of the tensor.
  if (outer == 1) {
    const std::uint64_t last = at.offset + (b1 - 1) * at.batch + (rows - 1) * at.pitch + cols;
    if (const auto r = range(first, last)) {
      return BatchRange{axis, r->first, r->second, {first - r->first * inner, at.batch, at.pitch}};
    }
  }
  // The matrices' rows are the steps outside the axis, the batches side by side within each.
  if (rows == 1 || at.pitch == step) {
    const std::uint64_t row0 = at.offset / step, col0 = at.offset % step;
    if (row0 + rows > outer) return std::nullopt;
    const std::uint64_t start = col0 + b0 * at.batch;  // the first batch's first column
    std::uint64_t lo = start, hi = col0 + (b1 - 1) * at.batch + cols;
    if (hi > step) return std::nullopt;
    // Where each batch's columns lie within its stride (q, k and v of a head side by side), the range takes the
    // batches' whole strides: the same range for each of the three, which one split of the projection holds.
    const std::uint64_t within = col0 % at.batch;
    if (at.batch >= cols && within + cols <= at.batch && col0 - within + b1 * at.batch <= step) {
      lo = col0 - within + b0 * at.batch;
      hi = col0 - within + b1 * at.batch;
    }
    if (const auto r = range(lo, hi)) {
      const std::uint64_t width = (r->second - r->first) * inner;  // a row of the range's tensor
      return BatchRange{axis, r->first, r->second, {row0 * width + start - r->first * inner, at.batch, width}};
    }
  }
  return std::nullopt;
}

std::optional<std::size_t> batch_range_axis(const Shape& source, const MatrixPlacement& at, std::uint64_t rows,
                                            std::uint64_t cols) {
  std::optional<std::size_t> best;
  std::uint64_t best_elements = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t axis = 0; axis < source.rank(); ++axis) {
    const auto r = batch_range(source, at, rows, cols, axis, 0, 1);
    if (!r) continue;
    const std::uint64_t elements = source.elements() / source[axis] * (r->end - r->begin);
    if (elements < best_elements) best = axis, best_elements = elements;
  }
  return best;
}

}  // namespace ldmsim::fusion
