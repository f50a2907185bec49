// Private: where an attention op's matrices of a range of batches lie in a tensor (attention_regions.cpp), for the
// split of an attention op by its batches (heads) across core groups.
#pragma once

#include <cstdint>
#include <optional>

#include "ldmsim/kernels/attention_kernel.hpp"

namespace ldmsim::fusion {

/// Batches [b0, b1) of `rows` x `cols` matrices placed by `at` in a tensor of shape `source`, as a range of one of
/// its axes, and where the matrices lie in that range seen as a tensor of its own.
struct BatchRange {
  std::size_t axis = 0;
  std::uint64_t begin = 0, end = 0;  ///< along `axis`
  MatrixPlacement at;                ///< batch b0 first, in the range's tensor
};

/// The range of `axis` (as batch_range_axis chose it) holding batches [b0, b1), or nullopt when they are not in one
/// range of it: the axis is the tensor's outermost (a range of it is one block), or the matrices' rows are the
/// steps outside the axis and the batches lie side by side within each row.
std::optional<BatchRange> batch_range(const Shape& source, const MatrixPlacement& at, std::uint64_t rows,
                                      std::uint64_t cols, std::size_t axis, std::uint64_t b0, std::uint64_t b1);

/// The axis whose range holds one batch most tightly (the fewest elements), or nullopt when none holds it.
std::optional<std::size_t> batch_range_axis(const Shape& source, const MatrixPlacement& at, std::uint64_t rows,
                                            std::uint64_t cols);

}  // namespace ldmsim::fusion
