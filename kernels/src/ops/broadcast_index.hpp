// Private: walks the C-order indices of an output shape and yields, for each, the index of the element a
// lower-rank (broadcast) input supplies, incrementally (no division per element).
#pragma once

#include <array>
#include <cstdint>

#include "ldmsim/kernels/shape.hpp"

namespace ldmsim::ops {

class BroadcastIndex {
 public:
  /// Positioned at output element `start`.
  BroadcastIndex(const Shape& input, const Shape& output, std::uint64_t start)
      : strides_(broadcast_strides(input, output)), rank_(output.rank()) {
    for (std::size_t i = 0; i < rank_; ++i) dims_[i] = output[i];
    for (std::size_t i = rank_; i-- > 0;) {
      coords_[i] = start % dims_[i];
      start /= dims_[i];
      index_ += coords_[i] * strides_[i];
    }
  }
  std::uint64_t index() const { return index_; }
  void next() {
    for (std::size_t i = rank_; i-- > 0;) {
      index_ += strides_[i];
      if (++coords_[i] < dims_[i]) return;
      index_ -= strides_[i] * dims_[i];
      coords_[i] = 0;
    }
  }

 private:
  std::array<std::uint64_t, Shape::kMaxRank> strides_{};
  std::array<std::uint64_t, Shape::kMaxRank> dims_{};
  std::array<std::uint64_t, Shape::kMaxRank> coords_{};
  std::size_t rank_ = 0;
  std::uint64_t index_ = 0;
};

}  // namespace ldmsim::ops
