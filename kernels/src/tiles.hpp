// Private helpers of the kernels: the work split over every core of every group, and tensors seen as
// sequences of units (samples or channel planes) moved by DMA one at a time, or in pairs when a unit has an
// odd number of fp16 elements (the add-a-row plan makes the pair legal; without padding it traps).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/padding.hpp"

namespace ldmsim::kernels::detail {

/// This core's index among all cores of all groups, interleaved over the groups (worker w runs in group
/// w % groups) so that work with fewer items than cores still spreads over every group's memory controller.
inline std::size_t worker(const Core& core) {
  return static_cast<std::size_t>(core.id()) * static_cast<std::size_t>(core.arch().core_groups) +
         static_cast<std::size_t>(core.cg());
}
/// All cores of all groups.
inline std::size_t workers(const Core& core) {
  return static_cast<std::size_t>(core.arch().core_groups) * static_cast<std::size_t>(core.group_size());
}

/// Largest even tile (in elements) such that `buffers` fp16 buffers fit in the free ldm, capped at `cap`.
inline std::size_t even_tile(Core& core, std::size_t buffers, std::size_t cap = 8192) {
  const std::uint64_t free = core.ldm().capacity() - core.ldm().used();
  const std::uint64_t per = free / (buffers * sizeof(f16)) / 64 * 64;  // leave room for alignment
  return std::max<std::size_t>(2, std::min<std::size_t>(cap, static_cast<std::size_t>(per > 64 ? per - 32 : 2)));
}

/// A tensor as a sequence of units: unit u starts at (u / per_outer) * outer + (u % per_outer) * pitch.
struct Units {
  DevicePtr<f16> base;
  std::size_t pitch = 1;      ///< elements a unit spans in memory
  std::size_t outer = 1;      ///< elements between blocks of per_outer units
  std::size_t per_outer = 1;  ///< units per block
  std::size_t count = 0;      ///< logical units
  std::size_t capacity = 0;   ///< units the buffer holds (pairs may read/write the padding unit)

  std::size_t start(std::size_t u) const { return (u / per_outer) * outer + (u % per_outer) * pitch; }
};

/// The samples (n units of c*h*w) of a tensor.
inline Units samples(DevicePtr<f16> base, const Layout& l) {
  return Units{base, l.chw_pitch, l.chw_pitch, 1, l.shape.n, l.total / std::max<std::size_t>(l.chw_pitch, 1)};
}
/// The channel planes (n*c units of h*w) of a tensor.
inline Units planes(DevicePtr<f16> base, const Layout& l) {
  return Units{
      base, l.hw_pitch, l.chw_pitch, l.shape.c, l.shape.n * l.shape.c, l.total / std::max<std::size_t>(l.hw_pitch, 1)};
}

/// DMA of units [first, first + k) (k <= 2) between main memory and ldm (unit i at ldm element i * pitch).
/// Even units move one request each; odd units move as one request of min(2, capacity - first) units.
template <bool kGet>
inline std::array<DmaHandle, 2> move_units(Core& core, const Units& t, LdmSpan<f16> buf, std::size_t first,
                                           std::size_t k) {
  std::array<DmaHandle, 2> h{};
  if (t.pitch % 2 == 0) {
    for (std::size_t i = 0; i < k; ++i) {
      auto part = buf.subspan(i * t.pitch, t.pitch);
      if constexpr (kGet) {
        h[i] = core.get(part, DevicePtr<const f16>(t.base + t.start(first + i)));
      } else {
        h[i] = core.put(t.base + t.start(first + i), LdmSpan<const f16>(part));
      }
    }
    return h;
  }
  const std::size_t m = std::min<std::size_t>(2, t.capacity - first);
  auto part = buf.first(m * t.pitch);
  if constexpr (kGet) {
    h[0] = core.get(part, DevicePtr<const f16>(t.base + t.start(first)));
  } else {
    h[0] = core.put(t.base + t.start(first), LdmSpan<const f16>(part));
  }
  return h;
}

/// True when padded element p holds a logical element (not padding).
inline bool is_logical(const Layout& l, std::size_t p) {
  const std::size_t n = p / l.chw_pitch, r = p % l.chw_pitch;
  const std::size_t c = r / l.hw_pitch, r2 = r % l.hw_pitch;
  return n < l.shape.n && c < l.shape.c && r2 / l.w_pitch < l.shape.h && r2 % l.w_pitch < l.shape.w;
}

inline void wait_all(const std::array<DmaHandle, 2>& h) {
  for (const auto& x : h) x.wait();
}

}  // namespace ldmsim::kernels::detail
