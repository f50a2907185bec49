// Private: the geometry of one convolution (NCHW input, weights [K, C/groups, R, S]) and the runs of input
// elements an image tile is made of. The GEMM view, per sample n and group g: Y[n, g] [Kg, P*Q] =
// W[g] [Kg, Cg*R*S] x B[n, g] [Cg*R*S, P*Q], where B's row j = (c, r, s) and column t = (p, q) hold
// X[n, g*Cg + c, p*sh - pad_top + r*dh, q*sw - pad_left + s*dw], zero outside the input (the padding).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "ldmsim/kernels/padding.hpp"

namespace ldmsim::ops {

enum class ConvAlgo : std::uint8_t { kIm2col, kDirect, kImplicit, kImplicitPrecomp, kDepthwise };
std::string_view to_string(ConvAlgo algo) noexcept;
/// Parses "im2col" | "direct" | "implicit" | "implicit-precomp" | "depthwise" (ConfigError names the valid ones).
ConvAlgo parse_conv_algo(std::string_view name);

struct ConvGeometry {
  std::size_t n = 1, c = 1, h = 1, w = 1;  ///< input
  std::size_t k = 1, r = 1, s = 1;         ///< output channels, kernel
  std::size_t groups = 1;
  std::size_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  std::size_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  std::size_t p = 1, q = 1;  ///< output height and width

  std::size_t cg() const { return c / groups; }
  std::size_t kg() const { return k / groups; }
  std::size_t rs() const { return r * s; }
  std::size_t depth() const { return cg() * r * s; }  ///< GEMM k: rows of an image matrix
  std::size_t pq() const { return p * q; }

  /// Output rows a tile of `nb` image columns can touch (a tile may start anywhere in a row).
  std::size_t rows_touched(std::size_t nb) const { return std::min(p, (nb + q - 1) / q + 1); }
  /// Input rows the output rows [0, rows) read, clipped to the input (windows of kernel rows, dilated).
  std::size_t input_rows_for(std::size_t rows) const {
    return std::min(h, (rows - 1) * stride_h + (r - 1) * dilation_h + 1);
  }
  /// Input columns `columns` consecutive output columns read (over every kernel column), clipped to the input.
  std::size_t input_columns_for(std::size_t columns) const {
    return std::min(w, (columns - 1) * stride_w + (s - 1) * dilation_w + 1);
  }
  /// The output columns [first, end) whose input column q*sw + shift - pad_left (shift = kernel column * dw) lies
  /// in the input.
  std::pair<std::size_t, std::size_t> valid_columns(std::size_t shift) const {
    const std::size_t first = shift >= pad_left ? 0 : (pad_left - shift + stride_w - 1) / stride_w;
    const std::size_t limit = w + pad_left;  // column + pad_left must stay below this
    return {first, shift >= limit ? 0 : (limit - shift - 1) / stride_w + 1};
  }

  /// Decodes image row j into (channel within the group, kernel row, kernel column).
  void split_row(std::size_t j, std::size_t& ci, std::size_t& ri, std::size_t& si) const {
    ci = j / rs();
    ri = (j / s) % r;
    si = j % s;
  }
};

/// The input elements of image row (ci, ri, si) for output row p and output columns [qa, qb) of sample n and
/// group g: valid columns [q0, q1) (outside them the tile is zero) whose elements start at `offset` of the
/// input layout and are `stride_w` apart. Empty (q0 == q1) when the input row lies in the padding.
struct ImageRun {
  std::size_t q0 = 0, q1 = 0;
  std::size_t offset = 0;
  bool empty() const { return q1 <= q0; }
  /// Input elements the run spans (first to last valid column).
  std::size_t span(std::size_t stride_w) const { return empty() ? 0 : (q1 - q0 - 1) * stride_w + 1; }
};

inline ImageRun image_run(const ConvGeometry& g, const Layout& x, std::size_t n, std::size_t group, std::size_t ci,
                          std::size_t ri, std::size_t si, std::size_t p, std::size_t qa, std::size_t qb) {
  ImageRun run;
  const std::size_t h_plus_pad = p * g.stride_h + ri * g.dilation_h;  // input row + pad_top
  if (h_plus_pad < g.pad_top || h_plus_pad - g.pad_top >= g.h) return run;
  const std::size_t h = h_plus_pad - g.pad_top;
  const std::size_t shift = si * g.dilation_w;  // input column of q is q * stride_w + shift - pad_left
  const auto [q_first, q_end] = g.valid_columns(shift);
  run.q0 = std::max(qa, q_first);
  run.q1 = std::min(qb, q_end);
  if (run.empty()) return run;
  const std::size_t column = run.q0 * g.stride_w + shift - g.pad_left;
  run.offset = x.offset(n, group * g.cg() + ci, h, column);
  return run;
}

/// Output rows p touched by image columns [j0, j1) (t = p * q + column), and the columns of row p among them.
inline std::size_t first_row(const ConvGeometry& g, std::size_t j0) {
  return j0 / g.q;
}
inline std::size_t last_row(const ConvGeometry& g, std::size_t j1) {
  return (j1 - 1) / g.q;
}
inline std::size_t row_begin(const ConvGeometry& g, std::size_t p, std::size_t j0) {
  return p == first_row(g, j0) ? j0 % g.q : 0;
}
inline std::size_t row_end(const ConvGeometry& g, std::size_t p, std::size_t j1) {
  return p == last_row(g, j1) ? (j1 - 1) % g.q + 1 : g.q;
}

}  // namespace ldmsim::ops
