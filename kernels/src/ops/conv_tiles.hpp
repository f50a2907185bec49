// Private: how conv's image tiles (B of the GEMM view, see conv_geometry.hpp) reach ldm, one TileSource per
// algorithm, and the im2col kernel that materialises the whole image matrix in main memory instead.
// - implicit: per image row j and output row p, one DMA of the input run, its address computed on the fly from
//   (n, p, q) and (c, r, s) (divisions and bounds per access, charged as integer work).
// - implicit-precomp: addressed from a per-layer table of (offset, r*dh, s*dw) per image row that the control
//   core computed once (the convolution preprocessor) plus a column start per (n, p, q). Image rows of one input
//   channel read overlapping input rows: one DMA fetches the rows all of the chunk's (r, s) of that channel need
//   for the tile's output rows (every stride_h-th row when the chunk holds a single r), the union of their
//   columns, and each image row is picked from it by its table row and column, masked at the borders. Where
//   those blocks are whole planes (a small image), consecutive channels' blocks are read as one. Each core
//   keeps the table in ldm when it takes at most 1/8 of the local store, else reads each k chunk's entries (one DMA) as
//   it builds the tile.
// - direct: per input channel of the chunk, one block read of the input window the tile's outputs slide
//   over; the tile is built from it in ldm (chunks are whole channels).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "conv_geometry.hpp"
#include "matrix_multiply.hpp"
#include "tile_memo.hpp"

namespace ldmsim::ops {

/// One entry of the convolution preprocessor's table: per image row j = (c, r, s).
struct OffsetEntry {
  std::int32_t offset;  ///< c * hw_pitch + r*dh * w_pitch + s*dw: input elements from the column start
  std::int32_t row;     ///< r * dh
  std::int32_t column;  ///< s * dw
};

/// The table for input layout `x` (the control core's precomputation, once per layer).
std::vector<OffsetEntry> offset_table(const ConvGeometry& g, const Layout& x);

/// Appends a geometry's every field to a blocking search key (TileSource::describe).
void describe(std::vector<std::uint64_t>& key, const ConvGeometry& g);

/// Charges integer address work to a core and counts it in `counter`.
inline void charge_address_ops(Core& core, std::atomic<std::uint64_t>& counter, std::uint64_t ops) {
  core.compute({.cycles = ops});
  counter += ops;
}

/// The input rows one input channel's image rows of a chunk read for a tile: `rows` input rows from h0, `step`
/// apart (the others are padding), input columns [w0, w1) (the union over its (r, s)), the first at element
/// `offset`.
struct RowBlock {
  std::size_t h0 = 0, rows = 0, step = 1, w0 = 0, w1 = 0;
  std::size_t offset = 0;
  bool empty() const { return rows == 0 || w1 <= w0; }
};

/// How many of blocks[first, ...) continue one another: the same rows and columns, each one plane (`hw_pitch`
/// elements) after the last, and a plane exactly the rows a block spans (`w_pitch` elements per input row), so
/// their rows are evenly spaced across the planes. implicit-precomp reads such a run as one block: a small image's
/// channels in one request, not one per channel. 0 for an empty block.
std::size_t continuing_blocks(std::span<const RowBlock> blocks, std::size_t first, std::size_t hw_pitch,
                              std::size_t w_pitch);

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
  double panel_cost(std::size_t k, std::size_t kc, std::size_t nb, const tiling::ReadPricer& price,
                    MergedReads merged) const override;
  double build_cycles(std::size_t k, std::size_t nb, const ComputeModel& model) const override;
  std::size_t resident_elements() const override;
  void describe(std::vector<std::uint64_t>& key) const override;
  void load_resident(Core& core, LdmSpan<f16> resident) const override;
  void issue(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf, LdmSpan<f16> resident, std::size_t batch,
             std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1, PendingTile& pending) const override;
  const float* unpack(Core& core, LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch, std::size_t k0,
                      std::size_t k1, std::size_t j0, std::size_t j1, TileFloats& out) const override;
  /// Integer address operations charged so far, over every core.
  std::uint64_t address_ops() const { return address_ops_.load(); }

 private:
  std::size_t slot(std::size_t nb) const;
  bool precomputed() const { return table_.addr() != 0; }
  RowBlock row_block(std::size_t n, std::size_t group, const OffsetEntry* entries, std::size_t count, std::size_t j0,
                     std::size_t j1) const;
  std::size_t row_block_elements(std::size_t nb) const;
  /// ldm elements between consecutive row blocks of a chunk: row_block_elements made even, so every block lands
  /// at a 4-byte-aligned ldm address (a block's span of odd rows of an odd pitch is odd).
  std::size_t row_block_slot(std::size_t nb) const { return (row_block_elements(nb) + 1) / 2 * 2; }
  /// read_row_blocks, a layout found in this thread's PlanMemo reused for kPlan.
  void issue_row_blocks(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf, std::span<const OffsetEntry> entries,
                        std::size_t batch, std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1,
                        PendingTile& pending) const;
  /// A row block per input channel of the chunk (as `mode` says), their handles and layout in `buf` appended to
  /// `pending`.
  void read_row_blocks(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf, std::span<const OffsetEntry> entries,
                       std::size_t batch, std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1,
                       PendingTile& pending) const;
  void unpack_row_blocks(LdmSpan<const f16> buf, const PendingTile& reads, std::size_t k0, std::size_t k1,
                         std::size_t j0, std::size_t j1, TileFloats& out) const;

  ConvGeometry g_;
  DevicePtr<const f16> x_;
  Layout xl_;
  DevicePtr<const std::int32_t> table_;
  std::uint64_t ldm_bytes_ = 0;
  std::uint64_t id_ = TileMemo::next_source_id();
  mutable std::atomic<std::uint64_t> address_ops_{0};
};

class WindowTileSource final : public TileSource {
 public:
  WindowTileSource(const ConvGeometry& g, DevicePtr<const f16> x, const Layout& xl) : g_(g), x_(x), xl_(xl) {}
  std::size_t buffer_elements(std::size_t kc, std::size_t nb) const override;
  double panel_cost(std::size_t k, std::size_t kc, std::size_t nb, const tiling::ReadPricer& price,
                    MergedReads merged) const override;
  double build_cycles(std::size_t k, std::size_t nb, const ComputeModel& model) const override;
  std::size_t chunk_unit() const override { return g_.rs(); }
  void describe(std::vector<std::uint64_t>& key) const override;
  void issue(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf, LdmSpan<f16> resident, std::size_t batch,
             std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1, PendingTile& pending) const override;
  const float* unpack(Core& core, LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch, std::size_t k0,
                      std::size_t k1, std::size_t j0, std::size_t j1, TileFloats& out) const override;
  std::uint64_t address_ops() const { return address_ops_.load(); }

 private:
  /// The input window of the tile's columns: rows [h0, h1) x columns [w0, w1), clipped to the input.
  struct Window {
    std::size_t h0 = 0, h1 = 0, w0 = 0, w1 = 0;
    bool empty() const { return h1 <= h0 || w1 <= w0; }
  };
  Window window(std::size_t j0, std::size_t j1) const;
  std::size_t window_elements(std::size_t nb) const;
  /// Builds the tile of channels' windows (read as `reads` says) into out.
  void unpack_windows(LdmSpan<const f16> buf, const PendingTile& reads, const Window& win, std::size_t k0,
                      std::size_t k1, std::size_t j0, std::size_t j1, TileFloats& out) const;

  ConvGeometry g_;
  DevicePtr<const f16> x_;
  Layout xl_;
  std::uint64_t id_ = TileMemo::next_source_id();
  mutable std::atomic<std::uint64_t> address_ops_{0};
};

/// Writes the image matrix [n * groups * depth, p*q] (row pitch `pitch`, even) to `col`: every core of every
/// group builds rows dealt round-robin from runs of the input and puts each row whole.
struct Im2colArgs {
  ConvGeometry g;
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> col;
  std::size_t pitch = 0;
  std::atomic<std::uint64_t>* address_ops = nullptr;  ///< incremented by the integer work charged
};
/// Writes the image matrix: each row whole when it fits ldm, else in even segments of the free ldm.
void im2col_kernel(Core& core, const Im2colArgs& a);

}  // namespace ldmsim::ops
