// Private: the host floats of an ldm tile, on 64-byte cache lines. multiply_add (tile_math.hpp) loads whole
// vectors of a tile's rows; from a line boundary (and with a pitch of whole lines) no load straddles two lines, which
// makes its few-row blocks about 1.5x faster on an AVX-512 host (docs/benchmarks.md).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace ldmsim::ops {

/// An allocator whose blocks start on a 64-byte line.
template <typename T>
struct LineAligned {
  using value_type = T;
  static constexpr std::align_val_t kLine{64};

  LineAligned() = default;
  template <typename U>
  explicit LineAligned(const LineAligned<U>& /*other*/) noexcept {}

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kLine)); }
  void deallocate(T* p, std::size_t /*n*/) noexcept { ::operator delete(p, kLine); }
  friend bool operator==(const LineAligned& /*a*/, const LineAligned& /*b*/) { return true; }
};

/// A tile's floats, as multiply_add reads them.
using TileFloats = std::vector<float, LineAligned<float>>;

}  // namespace ldmsim::ops
