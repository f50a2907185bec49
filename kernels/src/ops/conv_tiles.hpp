// Private: how conv's image tiles (B of the GEMM view, see conv_geometry.hpp) reach ldm, one TileSource per
// algorithm, and the im2col kernel that materialises the whole image matrix in main memory instead.
// - implicit: per image row j and output row p, one DMA of the input run, its address computed on the fly from
//   (n, p, q) and (c, r, s) (divisions and bounds per access, charged as integer work).
// - implicit-precomp: addressed from a per-layer table of (offset, r*dh, s*dw) per image row that the control
//   core computed once (the convolution preprocessor) plus a column start per (n, p, q). Image rows of one
//   (c, r) read the same input row, so their runs are fetched as one DMA of the union and each row is picked
//   from it by its table column. Each core keeps the table in ldm when it takes at most 1/8 of the local
//   store, else reads each k chunk's entries (one DMA) as it builds the tile.
// - direct: per input channel of the chunk, one block read of the input window the tile's outputs slide
//   over; the tile is built from it in ldm (chunks are whole channels).
#pragma once

#include <cstdint>

#include "conv_geometry.hpp"
#include "matrix_multiply.hpp"

namespace ldmsim::ops {

/// One entry of the convolution preprocessor's table: per image row j = (c, r, s).
struct OffsetEntry {
  std::int32_t offset;  ///< c * hw_pitch + r*dh * w_pitch + s*dw: input elements from the column start
  std::int32_t row;     ///< r * dh
  std::int32_t column;  ///< s * dw
};

/// The table for input layout `x` (the control core's precomputation, once per layer).
std::vector<OffsetEntry> offset_table(const ConvGeometry& g, const Layout& x);

/// Integer operations charged per input run: computed on the fly vs looked up in the table.
inline constexpr std::uint64_t kAddressOpsOnTheFly = 14;
inline constexpr std::uint64_t kAddressOpsPrecomputed = 4;

class RunTileSource final : public TileSource {
 public:
  /// `table` (device memory, entries of offset_table) for implicit-precomp; a null pointer for implicit.
  /// `ldm_bytes`: the local store's size (decides whether the table stays resident).
  RunTileSource(const ConvGeometry& g, DevicePtr<const f16> x, const Layout& xl, DevicePtr<const std::int32_t> table,
                std::uint64_t ldm_bytes)
      : g_(g), x_(x), xl_(xl), table_(table), ldm_bytes_(ldm_bytes) {}
  std::size_t buffer_elements(std::size_t kc, std::size_t nb) const override;
  std::size_t resident_elements() const override;
  void load_resident(Core& core, LdmSpan<f16> resident) const override;
  PendingTile issue(Core& core, LdmSpan<f16> buf, LdmSpan<f16> resident, std::size_t batch, std::size_t k0,
                    std::size_t k1, std::size_t j0, std::size_t j1) const override;
  void unpack(Core& core, LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch, std::size_t k0, std::size_t k1,
              std::size_t j0, std::size_t j1, std::vector<float>& out) const override;

 private:
  std::size_t slot(std::size_t nb) const;
  std::size_t rows_per_tile(std::size_t nb) const;
  bool precomputed() const { return table_.addr() != 0; }
  /// The input run shared by image rows [j, j_end) of one (c, r) for output row p: input columns [w0, w1).
  struct UnionRun {
    std::size_t w0 = 0, w1 = 0;
    std::size_t offset = 0;
    bool empty() const { return w1 <= w0; }
  };
  UnionRun union_run(std::size_t n, std::size_t group, std::size_t j, std::size_t j_end, std::size_t p, std::size_t qa,
                     std::size_t qb, const OffsetEntry& first) const;
  PendingTile issue_unions(Core& core, LdmSpan<f16> buf, const std::vector<OffsetEntry>& entries, std::size_t batch,
                           std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1) const;
  void unpack_unions(LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch, std::size_t k0, std::size_t k1,
                     std::size_t j0, std::size_t j1, std::vector<float>& out) const;

  ConvGeometry g_;
  DevicePtr<const f16> x_;
  Layout xl_;
  DevicePtr<const std::int32_t> table_;
  std::uint64_t ldm_bytes_ = 0;
};

class WindowTileSource final : public TileSource {
 public:
  WindowTileSource(const ConvGeometry& g, DevicePtr<const f16> x, const Layout& xl) : g_(g), x_(x), xl_(xl) {}
  std::size_t buffer_elements(std::size_t kc, std::size_t nb) const override;
  std::size_t chunk_unit() const override { return g_.rs(); }
  PendingTile issue(Core& core, LdmSpan<f16> buf, LdmSpan<f16> resident, std::size_t batch, std::size_t k0,
                    std::size_t k1, std::size_t j0, std::size_t j1) const override;
  void unpack(Core& core, LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch, std::size_t k0, std::size_t k1,
              std::size_t j0, std::size_t j1, std::vector<float>& out) const override;

 private:
  /// The input window of the tile's columns: rows [h0, h1) x columns [w0, w1), clipped to the input.
  struct Window {
    std::size_t h0 = 0, h1 = 0, w0 = 0, w1 = 0;
    bool empty() const { return h1 <= h0 || w1 <= w0; }
  };
  Window window(std::size_t j0, std::size_t j1) const;
  std::size_t window_elements(std::size_t nb) const;

  ConvGeometry g_;
  DevicePtr<const f16> x_;
  Layout xl_;
};

/// Writes the image matrix [n * groups * depth, p*q] (row pitch `pitch`, even) to `col`: every core of every
/// group builds rows dealt round-robin from runs of the input and puts each row whole.
struct Im2colArgs {
  ConvGeometry g;
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> col;
  std::size_t pitch = 0;
};
void im2col_kernel(Core& core, const Im2colArgs& a);

}  // namespace ldmsim::ops
