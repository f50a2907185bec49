// Private: the 1-D kernel shared by activations and element-wise ops. The padded buffer (even length under
// the 1-D plan) is cut into even tiles dealt round-robin to every core of every group; the get of the next
// tile is issued before the current one is computed (double buffering).
#pragma once

#include <vector>

#include "tiles.hpp"

namespace ldmsim::kernels::detail {

/// y = f(x[0..arity)) element-wise over the padded buffer; padding positions are written as zero.
template <std::size_t kArity, typename F>
void flat_kernel(Core& core, std::array<DevicePtr<const f16>, kArity> in, DevicePtr<f16> out, Layout layout,
                 std::uint64_t flops_per_element, F fn) {
  const std::size_t total = layout.total;
  const std::size_t tile = even_tile(core, 2 * (kArity + 1));
  std::array<std::array<LdmSpan<f16>, 2>, kArity> xb;
  for (auto& b : xb) b = {core.ldm().alloc<f16>(tile), core.ldm().alloc<f16>(tile)};
  std::array<LdmSpan<f16>, 2> yb = {core.ldm().alloc<f16>(tile), core.ldm().alloc<f16>(tile)};
  std::array<std::array<DmaHandle, kArity>, 2> gets{};
  std::array<DmaHandle, 2> puts{};
  std::vector<float> xs(kArity * tile), ys(tile);
  const bool natural = layout.chw_pitch == layout.shape.chw() && layout.hw_pitch == layout.shape.hw() &&
                       layout.w_pitch == layout.shape.w;
  const std::size_t step = workers(core) * tile;
  auto issue = [&](std::size_t at, int slot) {
    const std::size_t len = std::min(tile, total - at);
    for (std::size_t a = 0; a < kArity; ++a) {
      gets[static_cast<std::size_t>(slot)][a] = core.get(xb[a][static_cast<std::size_t>(slot)].first(len), in[a] + at);
    }
  };
  std::size_t at = worker(core) * tile;
  int slot = 0;
  if (at < total) issue(at, slot);
  for (; at < total; at += step, slot ^= 1) {
    const auto s = static_cast<std::size_t>(slot);
    const std::size_t len = std::min(tile, total - at);
    if (at + step < total) issue(at + step, slot ^ 1);
    for (auto& g : gets[s]) g.wait();
    for (std::size_t a = 0; a < kArity; ++a) {
      halves_to_floats(xb[a][s].first(len).span(), std::span<float>(xs.data() + a * tile, len));
    }
    for (std::size_t i = 0; i < len; ++i) {
      std::array<float, kArity> v;
      for (std::size_t a = 0; a < kArity; ++a) v[a] = xs[a * tile + i];
      ys[i] = fn(v);
    }
    if (natural) {  // padding is only the tail
      const std::size_t logical = layout.shape.elements();
      if (at + len > logical)
        std::fill(ys.begin() + static_cast<std::ptrdiff_t>(std::max(at, logical) - at),
                  ys.begin() + static_cast<std::ptrdiff_t>(len), 0.0f);
    } else {
      for (std::size_t i = 0; i < len; ++i) {
        if (!is_logical(layout, at + i)) ys[i] = 0.0f;
      }
    }
    core.compute({.flops = flops_per_element * len});
    puts[s].wait();  // the previous put from this buffer must be done before it is overwritten
    floats_to_halves(std::span<const float>(ys.data(), len), yb[s].first(len).span());
    puts[s] = core.put(out + at, LdmSpan<const f16>(yb[s].first(len)));
  }
  puts[0].wait();
  puts[1].wait();
}

}  // namespace ldmsim::kernels::detail
