// conv's image tiles (see conv_tiles.hpp).
#include "conv_tiles.hpp"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "ldmsim/kernels/matrix_block.hpp"
#include "tile_math.hpp"

namespace ldmsim::ops {
namespace {

constexpr std::size_t kMasked = std::numeric_limits<std::size_t>::max();

/// The column start of (n, group, p, q): input element (p*sh - pad_top, q*sw - pad_left) of the group's first
/// channel, as a signed offset (negative inside the padding).
std::int64_t column_start(const ConvGeometry& g, const Layout& x, std::size_t n, std::size_t group, std::size_t p,
                          std::size_t q) {
  const auto h = static_cast<std::int64_t>(p * g.stride_h) - static_cast<std::int64_t>(g.pad_top);
  const auto w = static_cast<std::int64_t>(q * g.stride_w) - static_cast<std::int64_t>(g.pad_left);
  return static_cast<std::int64_t>(x.offset(n, group * g.cg(), 0, 0)) + h * static_cast<std::int64_t>(x.w_pitch) + w;
}

/// Building a tile from ldm data: vector copies when columns are contiguous, element gathers otherwise.
KernelWork tile_build_work(const ComputeModel& model, std::size_t elements, bool contiguous) {
  if (contiguous) return model.elementwise(DataType::kF32, elements, 0, 1, 1);
  return KernelWork{.type = DataType::kF32, .ldm_accesses = 2 * elements, .loops = 1};
}

void charge_tile_build(Core& core, std::size_t elements, bool contiguous) {
  core.compute(tile_build_work(core.arch().compute, elements, contiguous));
}

double build_work_cycles(const ComputeModel& model, std::size_t elements, bool contiguous) {
  return static_cast<double>(model.cycles(tile_build_work(model, elements, contiguous)));
}

/// The output rows a tile's columns [j0, j1) span, and each one's columns [begin, end): the same for every image
/// row of the tile, so worked out once per tile build.
struct TileRows {
  struct Span {
    std::size_t p, begin, end;
  };
  std::vector<Span> spans;
  TileRows(const ConvGeometry& g, std::size_t j0, std::size_t j1) {
    for (std::size_t p = first_row(g, j0); p <= last_row(g, j1); ++p)
      spans.push_back({p, row_begin(g, p, j0), row_end(g, p, j1)});
  }
};

/// Fills one image row (kernel offsets row_plus = r*dh, column = s*dw) of a tile's columns [j0, j1) (output rows
/// `rows`) from input rows held in ldm as floats: row_of(h) gives input row h's values for columns [w0, w1) (or
/// nullptr when the row is not held: padding). Every element is written: runs of valid columns are copied whole,
/// the rest is zero (writing the zeros here, not clearing the whole tile first, halves the stores of a tile build).
template <typename RowOf>
void fill_image_row(const ConvGeometry& g, std::size_t row_plus, std::size_t column, std::size_t j0,
                    const TileRows& rows, std::size_t w0, std::size_t w1, RowOf&& row_of, float* out) {
  // Valid q: w0 <= q*sw + column - pad_left < w1.
  const std::size_t low = w0 + g.pad_left, high = w1 + g.pad_left;  // bounds of q*sw + column
  const std::size_t q_low = low > column ? (low - column + g.stride_w - 1) / g.stride_w : 0;
  const std::size_t q_high = high > column ? (high - 1 - column) / g.stride_w + 1 : 0;
  for (const auto& [p, begin, end] : rows.spans) {
    float* dst = out + (p * g.q - j0);
    const std::size_t hp = p * g.stride_h + row_plus;
    const float* src = hp < g.pad_top ? nullptr : row_of(hp - g.pad_top);
    std::size_t q0 = std::min(std::max(begin, q_low), end), q1 = std::max(q0, std::min(end, q_high));
    if (src == nullptr) q0 = q1 = end;
    std::fill(dst + begin, dst + q0, 0.0f);
    if (q0 < q1) {
      const float* from = src + (q0 * g.stride_w + column - low);
      if (g.stride_w == 1) {
        std::copy_n(from, q1 - q0, dst + q0);
      } else {
        for (std::size_t q = q0; q < q1; ++q) dst[q] = from[(q - q0) * g.stride_w];
      }
    }
    std::fill(dst + q1, dst + end, 0.0f);
  }
}

}  // namespace

std::vector<OffsetEntry> offset_table(const ConvGeometry& g, const Layout& x) {
  std::vector<OffsetEntry> table(g.depth());
  for (std::size_t j = 0; j < g.depth(); ++j) {
    std::size_t ci = 0, ri = 0, si = 0;
    g.split_row(j, ci, ri, si);
    const std::size_t row = ri * g.dilation_h, column = si * g.dilation_w;
    table[j] = {static_cast<std::int32_t>(ci * x.hw_pitch + row * x.w_pitch + column), static_cast<std::int32_t>(row),
                static_cast<std::int32_t>(column)};
  }
  return table;
}

void describe(std::vector<std::uint64_t>& key, const ConvGeometry& g) {
  key.insert(key.end(), {g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.groups, g.stride_h, g.stride_w, g.dilation_h,
                         g.dilation_w, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, g.p, g.q});
}

// ---- implicit and implicit-precomp: DMA of input runs ----

std::size_t RunTileSource::slot(std::size_t nb) const {
  const std::size_t columns = std::min(nb, g_.q) * g_.stride_w;
  return tiling::ceil_even(precomputed() ? columns + (g_.s - 1) * g_.dilation_w : columns) + 2;
}

double RunTileSource::panel_cost(std::size_t k, std::size_t kc, std::size_t nb, const tiling::ReadPricer& price,
                                 MergedReads merged) const {
  const std::size_t rows = g_.rows_touched(nb);
  if (!precomputed()) {  // a run per image row and output row
    const std::size_t run = std::min(nb, g_.q) * g_.stride_w;
    return static_cast<double>(k * rows) * price.block(1, run, run, slot(nb));
  }
  // A row block (its input rows x the union's width) per input channel: every sh-th input row for one kernel row,
  // every row of the windows for several.
  const std::size_t width = g_.input_columns_for(g_.q);
  const double blocks = std::ceil(static_cast<double>(k) / static_cast<double>(g_.rs()));
  const std::size_t block_rows = g_.r == 1 ? rows : g_.input_rows_for(rows);
  const std::size_t pitch = g_.r == 1 ? g_.stride_h * xl_.w_pitch : xl_.w_pitch;
  // A tile of every output position reads whole planes where a plane is exactly the block's rows; their blocks
  // continue one another, and read_row_blocks reads each k chunk's channels as one block.
  if (merged == MergedReads::kAsIssued && nb >= g_.pq() && block_rows * pitch == xl_.hw_pitch) {
    double cost = 0;
    for (std::size_t k0 = 0; k0 < k; k0 += kc) {
      const std::size_t k1 = std::min(k, k0 + kc);
      const std::size_t channels = (k1 - 1) / g_.rs() - k0 / g_.rs() + 1;  // touched by image rows [k0, k1)
      cost += price.block(channels * block_rows, width, pitch, channels * row_block_elements(nb));
    }
    return cost;
  }
  return blocks * price.block(block_rows, width, pitch, row_block_elements(nb));
}

double RunTileSource::build_cycles(std::size_t k, std::size_t nb, const ComputeModel& model) const {
  if (precomputed()) {
    const double blocks = std::ceil(static_cast<double>(k) / static_cast<double>(g_.rs()));
    return build_work_cycles(model, k * nb, g_.stride_w == 1) + blocks * kAddressOpsPrecomputed;
  }
  const double addressing = static_cast<double>(k * g_.rows_touched(nb) * kAddressOpsOnTheFly);
  return (g_.stride_w != 1 ? build_work_cycles(model, k * nb, false) : 0.0) + addressing;
}

void RunTileSource::describe(std::vector<std::uint64_t>& key) const {
  key.push_back(1);  // the kind of source
  ops::describe(key, g_);
  ops::describe(key, xl_);
  key.insert(key.end(), {precomputed() ? 1U : 0U, ldm_bytes_});
}

std::size_t RunTileSource::resident_elements() const {
  const std::size_t bytes = g_.depth() * sizeof(OffsetEntry);
  return precomputed() && bytes <= ldm_bytes_ / 8 ? bytes / sizeof(f16) : 0;
}

void RunTileSource::load_resident(Core& core, LdmSpan<f16> resident) const {
  LdmSpan<std::int32_t> table(reinterpret_cast<std::int32_t*>(resident.data()), resident.ldm_addr(), g_.depth() * 3);
  core.get(table, table_).wait();
}

std::size_t RunTileSource::buffer_elements(std::size_t kc, std::size_t nb) const {
  if (!precomputed()) return kc * g_.rows_touched(nb) * slot(nb);
  // One row block per input channel: a chunk of kc image rows touches at most kc / (r*s) + 2 of them.
  const std::size_t runs = (kc / g_.rs() + 2) * row_block_slot(nb);
  const std::size_t table = resident_elements() == 0 ? kc * sizeof(OffsetEntry) / sizeof(f16) + 2 : 0;
  return runs + table;
}

void RunTileSource::issue(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf, LdmSpan<f16> resident, std::size_t batch,
                          std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1, PendingTile& pending) const {
  if (precomputed()) {
    if (!resident.empty()) {  // the core's resident table, read where it is
      const auto* table = reinterpret_cast<const OffsetEntry*>(resident.data());
      issue_row_blocks(core, mode, buf, std::span(table + k0, k1 - k0), batch, k0, k1, j0, j1, pending);
      return;
    }
    // The chunk's entries, read into the tail of the buffer (and copied: the row blocks land in the same buffer).
    const std::size_t count = (k1 - k0) * 3;
    const std::size_t at = tiling::floor_even(buf.size() - count * 2);  // 2 elements per int32
    LdmSpan<std::int32_t> table(reinterpret_cast<std::int32_t*>(buf.data() + at),
                                static_cast<LdmAddr>(buf.ldm_addr() + at * sizeof(f16)), count);
    core.get(table, table_ + k0 * 3).wait();
    const auto entries = std::make_unique_for_overwrite<OffsetEntry[]>(k1 - k0);  // no zeros: all overwritten
    std::memcpy(entries.get(), table.data(), count * sizeof(std::int32_t));
    issue_row_blocks(core, mode, buf, std::span(entries.get(), k1 - k0), batch, k0, k1, j0, j1, pending);
    return;
  }
  const std::size_t n = batch / g_.groups, group = batch % g_.groups, nb = j1 - j0;
  const std::size_t slot_size = slot(nb), runs_per_row = g_.rows_touched(nb);
  std::uint64_t runs = 0;
  for (std::size_t j = k0; j < k1; ++j) {
    std::size_t ci = 0, ri = 0, si = 0;
    g_.split_row(j, ci, ri, si);
    for (std::size_t p = first_row(g_, j0); p <= last_row(g_, j1); ++p) {
      const std::size_t index = (j - k0) * runs_per_row + (p - first_row(g_, j0));
      const ImageRun run = image_run(g_, xl_, n, group, ci, ri, si, p, row_begin(g_, p, j0), row_end(g_, p, j1));
      ++runs;
      if (run.empty()) {
        pending.starts.push_back(kMasked);
        continue;
      }
      const tiling::RangeRead read = tiling::get_range_as(core, mode, buf.subspan(index * slot_size, slot_size), x_,
                                                          xl_.total, {run.offset, run.offset + run.span(g_.stride_w)});
      pending.handles.push_back(read.handle);
      pending.starts.push_back(index * slot_size + read.first);
    }
  }
  if (mode != tiling::ReadMode::kPlan) charge_address_ops(core, address_ops_, runs * kAddressOpsOnTheFly);
}

std::size_t continuing_blocks(std::span<const RowBlock> blocks, std::size_t first, std::size_t hw_pitch,
                              std::size_t w_pitch) {
  const RowBlock& a = blocks[first];
  if (a.empty()) return 0;
  if (hw_pitch != a.rows * a.step * w_pitch) return 1;  // rows of consecutive planes not evenly spaced
  std::size_t run = 1;
  for (; first + run < blocks.size(); ++run) {
    const RowBlock& b = blocks[first + run];
    if (b.empty() || b.h0 != a.h0 || b.rows != a.rows || b.step != a.step || b.w0 != a.w0 || b.w1 != a.w1 ||
        b.offset != a.offset + run * hw_pitch) {
      break;
    }
  }
  return run;
}

RowBlock RunTileSource::row_block(std::size_t n, std::size_t group, const OffsetEntry* entries, std::size_t count,
                                  std::size_t j0, std::size_t j1) const {
  RowBlock block;
  const std::size_t p0 = first_row(g_, j0), p1 = last_row(g_, j1);
  const std::size_t qa = p0 == p1 ? j0 % g_.q : 0, qb = p0 == p1 ? (j1 - 1) % g_.q + 1 : g_.q;
  // Input rows p*sh + r*dh - pad_top over the tile's output rows and the entries' kernel rows (ascending within
  // a channel), clipped to the input: every sh-th row for one kernel row, all of them for several.
  const auto r_low = static_cast<std::size_t>(entries[0].row),
             r_high = static_cast<std::size_t>(entries[count - 1].row);
  block.step = r_low == r_high ? g_.stride_h : 1;
  std::size_t top = p0 * g_.stride_h + r_low;  // padded coordinates
  if (top < g_.pad_top) top += (g_.pad_top - top + block.step - 1) / block.step * block.step;
  const std::size_t bottom = std::min(p1 * g_.stride_h + r_high + 1, g_.pad_top + g_.h);
  block.rows = bottom > top ? (bottom - top + block.step - 1) / block.step : 0;
  block.h0 = top - std::min(top, g_.pad_top);
  // Input columns q*sw + s*dw - pad_left of the tile's columns, over the s of this (c, r), clipped to the input.
  bool any = false;
  for (std::size_t i = 0; i < count; ++i) {
    const auto shift = static_cast<std::size_t>(entries[i].column);
    const auto [q_first, q_end] = g_.valid_columns(shift);
    const std::size_t q0 = std::max(qa, q_first), q1 = std::min(qb, q_end);
    if (q0 >= q1) continue;
    const std::size_t w0 = q0 * g_.stride_w + shift - g_.pad_left,
                      w1 = (q1 - 1) * g_.stride_w + shift - g_.pad_left + 1;
    block.w0 = any ? std::min(block.w0, w0) : w0;
    block.w1 = any ? std::max(block.w1, w1) : w1;
    any = true;
  }
  if (!any || block.empty()) return {};
  // Column start of (n, p0, q = 0) + the table's offset without its column = input column 0 of input row
  // p0*sh + r_low*dh - pad_top (maybe inside the padding); the block starts (top - that row) rows below.
  const std::int64_t row_start = column_start(g_, xl_, n, group, p0, 0) + (entries[0].offset - entries[0].column) +
                                 static_cast<std::int64_t>(g_.pad_left);
  const auto rows_below = static_cast<std::int64_t>(top - (p0 * g_.stride_h + r_low));
  block.offset = static_cast<std::size_t>(row_start + rows_below * static_cast<std::int64_t>(xl_.w_pitch)) + block.w0;
  return block;
}

std::size_t RunTileSource::row_block_elements(std::size_t nb) const {
  // A block of one kernel row (every sh-th input row) or of several (every row of the window).
  const std::size_t width = g_.input_columns_for(g_.q), rows = g_.rows_touched(nb);
  return std::max(tiling::block_or_span_elements(rows, width, g_.stride_h * xl_.w_pitch),
                  tiling::block_or_span_elements(g_.input_rows_for(rows), width, xl_.w_pitch));
}

void RunTileSource::issue_row_blocks(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf,
                                     std::span<const OffsetEntry> entries, std::size_t batch, std::size_t k0,
                                     std::size_t k1, std::size_t j0, std::size_t j1, PendingTile& pending) const {
  // A team member lays out the reads its leader issues into the same buffer: one layout per host thread serves
  // them all (the entries follow from k0, k1: the table is fixed). The key is built after the reads are issued
  // (issuing may switch fibers, which reuse the memo).
  PlanMemo& memo = PlanMemo::of(core);
  const auto fill_key = [&] { memo.scratch_key().assign({id_, batch, k0, k1, j0, j1, buf.ldm_addr(), buf.size()}); };
  if (mode == tiling::ReadMode::kPlan) {
    fill_key();
    if (const std::vector<std::size_t>* starts = memo.find()) {
      pending.starts.assign(starts->begin(), starts->end());
      return;
    }
  }
  read_row_blocks(core, mode, buf, entries, batch, k0, k1, j0, j1, pending);
  if (mode != tiling::ReadMode::kPe) {  // a team's layout, for the other members (a PE read has no team)
    fill_key();
    memo.insert() = pending.starts;
  }
}

void RunTileSource::read_row_blocks(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf,
                                    std::span<const OffsetEntry> entries, std::size_t batch, std::size_t k0,
                                    std::size_t k1, std::size_t j0, std::size_t j1, PendingTile& pending) const {
  const std::size_t n = batch / g_.groups, group = batch % g_.groups, slot = row_block_slot(j1 - j0);
  // Each input channel's row block; a run of blocks that continue one another is read as one block.
  // In place for a chunk of up to 16 channels (not thread-local scratch: issuing a read may switch to another
  // core's fiber).
  boost::container::small_vector<RowBlock, 16> blocks;
  blocks.reserve((k1 - k0) / g_.rs() + 2);
  for (std::size_t j = k0; j < k1;) {
    const std::size_t j_end = std::min(k1, (j / g_.rs() + 1) * g_.rs());  // one input channel's image rows
    blocks.push_back(row_block(n, group, entries.data() + (j - k0), j_end - j, j0, j1));
    j = j_end;
  }
  std::size_t used = 0;
  for (std::size_t i = 0; i < blocks.size();) {
    const std::size_t run =
        continuing_blocks(std::span<const RowBlock>(blocks.data(), blocks.size()), i, xl_.hw_pitch, xl_.w_pitch);
    if (run == 0) {
      pending.starts.push_back(kMasked);
      ++i;
      continue;
    }
    const RowBlock& b = blocks[i];
    const tiling::BlockShape shape{b.offset, b.step * xl_.w_pitch, b.rows * run, b.w1 - b.w0};
    tiling::BlockRead read = tiling::get_block(core, buf.subspan(used * slot, run * slot), x_, xl_.total, shape, mode);
    for (std::size_t c = 0; c < run; ++c) {
      pending.starts.insert(pending.starts.end(), {b.h0, b.rows, b.step, b.w0, b.w1});
      for (std::size_t row = 0; row < b.rows; ++row)
        pending.starts.push_back(used * slot + read.start(c * b.rows + row));
    }
    used += run;
    i += run;
    for (DmaHandle& h : read.take_handles()) pending.handles.push_back(h);
  }
  if (mode != tiling::ReadMode::kPlan) charge_address_ops(core, address_ops_, blocks.size() * kAddressOpsPrecomputed);
}

void RunTileSource::unpack_row_blocks(LdmSpan<const f16> buf, const PendingTile& reads, std::size_t k0, std::size_t k1,
                                      std::size_t j0, std::size_t j1, TileFloats& out) const {
  const std::size_t width = j1 - j0, pitch = b_pitch_for(width);
  const TileRows tile_rows(g_, j0, j1);
  std::size_t next = 0;
  std::vector<float> rows;
  for (std::size_t j = k0; j < k1;) {
    const std::size_t j_end = std::min(k1, (j / g_.rs() + 1) * g_.rs());
    if (reads.starts[next] == kMasked) {  // the channel is all padding for these columns
      std::fill(out.begin() + static_cast<std::ptrdiff_t>((j - k0) * pitch),
                out.begin() + static_cast<std::ptrdiff_t>((j_end - k0) * pitch), 0.0f);
      ++next;
      j = j_end;
      continue;
    }
    const std::size_t h0 = reads.starts[next], count = reads.starts[next + 1], step = reads.starts[next + 2];
    const std::size_t w0 = reads.starts[next + 3], w1 = reads.starts[next + 4], columns = w1 - w0;
    next += 5;
    rows.resize(count * columns);
    for (std::size_t r = 0; r < count; ++r) to_floats(buf, reads.starts[next + r], columns, rows.data() + r * columns);
    next += count;
    for (std::size_t i = j; i < j_end; ++i) {
      std::size_t ci = 0, ri = 0, si = 0;
      g_.split_row(i, ci, ri, si);
      const auto row_of = [&](std::size_t h) -> const float* {
        if (h < h0) return nullptr;
        std::size_t held = h - h0;  // the held rows are `step` input rows apart (no division for the usual 1)
        if (step != 1) {
          if (held % step != 0) return nullptr;
          held /= step;
        }
        return held < count ? rows.data() + held * columns : nullptr;
      };
      fill_image_row(g_, ri * g_.dilation_h, si * g_.dilation_w, j0, tile_rows, w0, w1, row_of,
                     out.data() + (i - k0) * pitch);
    }
    j = j_end;
  }
  zero_padding(out.data(), k1 - k0, width, pitch);
}

const float* RunTileSource::unpack(Core& core, LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch,
                                   std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1,
                                   TileFloats& out) const {
  const std::size_t width = j1 - j0, pitch = b_pitch_for(width);
  if (precomputed()) {
    charge_tile_build(core, (k1 - k0) * width, g_.stride_w == 1);
    TileMemo& memo = TileMemo::of(core);
    memo.scratch_key().assign({id_, batch, k0, k1, j0, j1});
    if (const TileFloats* built = memo.find()) return built->data();
    TileFloats& tile = memo.insert(ProductQueue::of(core), (k1 - k0) * pitch);
    // A row member reads its leader's reads where they landed: its own copy is never made.
    unpack_row_blocks(core.readable_ldm(buf), reads, k0, k1, j0, j1, tile);
    return tile.data();
  }
  const LdmSpan<const f16> in = core.readable_ldm(buf);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>((k1 - k0) * pitch), 0.0f);
  const std::size_t n = batch / g_.groups, group = batch % g_.groups;
  std::size_t next = 0;
  std::vector<float> values;
  for (std::size_t j = k0; j < k1; ++j) {
    std::size_t ci = 0, ri = 0, si = 0;
    g_.split_row(j, ci, ri, si);
    for (std::size_t p = first_row(g_, j0); p <= last_row(g_, j1); ++p) {
      const std::size_t start = reads.starts[next++];
      if (start == kMasked) continue;
      const ImageRun run = image_run(g_, xl_, n, group, ci, ri, si, p, row_begin(g_, p, j0), row_end(g_, p, j1));
      values.resize(run.span(g_.stride_w));
      to_floats(in, start, values.size(), values.data());
      float* row = out.data() + (j - k0) * pitch + (p * g_.q - j0);
      for (std::size_t q = run.q0; q < run.q1; ++q) row[q] = values[(q - run.q0) * g_.stride_w];
    }
  }
  if (g_.stride_w != 1) charge_tile_build(core, (k1 - k0) * width, false);
  return out.data();
}

// ---- direct: one window read per input channel, tiles built in ldm ----

WindowTileSource::Window WindowTileSource::window(std::size_t j0, std::size_t j1) const {
  const std::size_t p0 = first_row(g_, j0), p1 = last_row(g_, j1);
  const std::size_t qa = p0 == p1 ? j0 % g_.q : 0, qb = p0 == p1 ? (j1 - 1) % g_.q + 1 : g_.q;
  // Rows and columns + padding, then clipped to the input.
  const std::size_t top = p0 * g_.stride_h, bottom = p1 * g_.stride_h + (g_.r - 1) * g_.dilation_h + 1;
  const std::size_t left = qa * g_.stride_w, right = (qb - 1) * g_.stride_w + (g_.s - 1) * g_.dilation_w + 1;
  Window win;
  win.h0 = std::max(top, g_.pad_top) - g_.pad_top;
  win.h1 = std::min(bottom, g_.pad_top + g_.h);
  win.h1 = win.h1 > g_.pad_top ? win.h1 - g_.pad_top : 0;
  win.w0 = std::max(left, g_.pad_left) - g_.pad_left;
  win.w1 = std::min(right, g_.pad_left + g_.w);
  win.w1 = win.w1 > g_.pad_left ? win.w1 - g_.pad_left : 0;
  return win;
}

void WindowTileSource::describe(std::vector<std::uint64_t>& key) const {
  key.push_back(2);  // the kind of source
  ops::describe(key, g_);
  ops::describe(key, xl_);
}

std::size_t WindowTileSource::window_elements(std::size_t nb) const {
  const std::size_t rows = g_.rows_touched(nb), height = g_.input_rows_for(rows);
  const std::size_t width = g_.input_columns_for(std::min(nb, g_.q));
  const std::size_t full = g_.input_columns_for(g_.q);
  return tiling::block_buffer_elements(height, rows > 1 ? full : width);
}

double WindowTileSource::panel_cost(std::size_t k, std::size_t, std::size_t nb, const tiling::ReadPricer& price,
                                    MergedReads) const {
  // A window (its input rows x the union's width) per input channel.
  const std::size_t height = g_.input_rows_for(g_.rows_touched(nb));
  const std::size_t width = g_.input_columns_for(g_.q);
  const double channels = std::ceil(static_cast<double>(k) / static_cast<double>(g_.rs()));
  return channels * price.block(height, width, xl_.w_pitch, window_elements(nb));
}

double WindowTileSource::build_cycles(std::size_t k, std::size_t nb, const ComputeModel& model) const {
  const double windows = static_cast<double>(k / g_.rs() + 1);
  return build_work_cycles(model, k * nb, g_.stride_w == 1) + windows * kAddressOpsPrecomputed;
}

std::size_t WindowTileSource::buffer_elements(std::size_t kc, std::size_t nb) const {
  return (kc + g_.rs() - 1) / g_.rs() * window_elements(nb);
}

void WindowTileSource::issue(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf, LdmSpan<f16>, std::size_t batch,
                             std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1,
                             PendingTile& pending) const {
  const std::size_t n = batch / g_.groups, group = batch % g_.groups;
  const Window win = window(j0, j1);
  if (win.empty()) return;
  const std::size_t per_channel = window_elements(j1 - j0);
  for (std::size_t ci = k0 / g_.rs(); ci < (k1 + g_.rs() - 1) / g_.rs(); ++ci) {
    const std::size_t slot = (ci - k0 / g_.rs()) * per_channel;
    const tiling::BlockShape block{xl_.offset(n, group * g_.cg() + ci, win.h0, win.w0), xl_.w_pitch, win.h1 - win.h0,
                                   win.w1 - win.w0};
    tiling::BlockRead read = tiling::get_block(core, buf.subspan(slot, per_channel), x_, xl_.total, block, mode);
    for (std::size_t row = 0; row < block.rows; ++row) pending.starts.push_back(slot + read.start(row));
    for (DmaHandle& h : read.take_handles()) pending.handles.push_back(h);
  }
  if (mode != tiling::ReadMode::kPlan)
    charge_address_ops(core, address_ops_, ((k1 - k0) / g_.rs() + 1) * kAddressOpsPrecomputed);
}

void WindowTileSource::unpack_windows(LdmSpan<const f16> buf, const PendingTile& reads, const Window& win,
                                      std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1,
                                      TileFloats& out) const {
  const std::size_t width = j1 - j0, pitch = b_pitch_for(width), rows = win.h1 - win.h0, columns = win.w1 - win.w0;
  std::vector<float> plane(rows * columns);
  const TileRows tile_rows(g_, j0, j1);
  std::size_t channel = std::numeric_limits<std::size_t>::max();
  for (std::size_t j = k0; j < k1; ++j) {
    std::size_t ci = 0, ri = 0, si = 0;
    g_.split_row(j, ci, ri, si);
    if (ci != channel) {  // the channel's window as floats
      channel = ci;
      const std::size_t first = (ci - k0 / g_.rs()) * rows;
      for (std::size_t row = 0; row < rows; ++row) {
        to_floats(buf, reads.starts[first + row], columns, plane.data() + row * columns);
      }
    }
    const auto row_of = [&](std::size_t h) -> const float* {
      return h >= win.h0 && h < win.h1 ? plane.data() + (h - win.h0) * columns : nullptr;
    };
    fill_image_row(g_, ri * g_.dilation_h, si * g_.dilation_w, j0, tile_rows, win.w0, win.w1, row_of,
                   out.data() + (j - k0) * pitch);
  }
  zero_padding(out.data(), k1 - k0, width, pitch);
}

const float* WindowTileSource::unpack(Core& core, LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch,
                                      std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1,
                                      TileFloats& out) const {
  const std::size_t width = j1 - j0, pitch = b_pitch_for(width);
  const Window win = window(j0, j1);
  if (win.empty()) {
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>((k1 - k0) * pitch), 0.0f);
    return out.data();
  }
  charge_tile_build(core, (k1 - k0) * width, g_.stride_w == 1);
  TileMemo& memo = TileMemo::of(core);
  memo.scratch_key().assign({id_, batch, k0, k1, j0, j1});
  if (const TileFloats* built = memo.find()) return built->data();
  TileFloats& tile = memo.insert(ProductQueue::of(core), (k1 - k0) * pitch);
  unpack_windows(core.readable_ldm(buf), reads, win, k0, k1, j0, j1, tile);  // where the leader's reads landed
  return tile.data();
}

// ---- im2col: the image matrix in main memory ----

namespace {

/// Image matrix row `index`'s batch, group, input channel and kernel row and column.
struct ImageRow {
  std::size_t n, group, ci, ri, si;
};
ImageRow image_row(const ConvGeometry& g, std::size_t index) {
  const std::size_t batch = index / g.depth();
  ImageRow r{batch / g.groups, batch % g.groups, 0, 0, 0};
  g.split_row(index % g.depth(), r.ci, r.ri, r.si);
  return r;
}

/// im2col for an image matrix row that does not fit ldm whole: each row is built in even segments of the free
/// ldm, each segment's input runs (one per output row it touches) read side by side into one buffer.
void im2col_in_segments(Core& core, const Im2colArgs& a) {
  const ConvGeometry& g = a.g;
  const std::size_t rows = g.n * g.groups * g.depth(), pq = g.pq();
  // A segment of `seg` outputs reads at most seg * stride_w inputs, plus up to 3 per output row (alignment).
  const std::size_t seg = tiling::fit_elements(core, g.stride_w + 4, 16384);
  auto runs = core.ldm().alloc<f16>((g.stride_w + 3) * seg);
  auto row = core.ldm().alloc<f16>(seg);
  std::vector<float> values(seg), run_values;
  struct Issued {
    std::size_t p;
    ImageRun run;
    std::size_t slot;
    tiling::RangeRead read;
  };
  std::vector<Issued> issued;
  DmaHandle put;
  for (std::size_t index = tiling::worker_index(core); index < rows; index += tiling::worker_count(core)) {
    const auto [n, group, ci, ri, si] = image_row(g, index);
    for (std::size_t f0 = 0; f0 < a.pitch; f0 += seg) {
      const std::size_t f1 = std::min(a.pitch, f0 + seg), len = f1 - f0, valid_end = std::min(f1, pq);
      issued.clear();
      std::size_t used = 0, touched = 0;
      for (std::size_t p = f0 / g.q; f0 < valid_end && p <= (valid_end - 1) / g.q; ++p, ++touched) {
        const std::size_t qa = p == f0 / g.q ? f0 % g.q : 0;
        const std::size_t qb = p == (valid_end - 1) / g.q ? (valid_end - 1) % g.q + 1 : g.q;
        const ImageRun run = image_run(g, a.xl, n, group, ci, ri, si, p, qa, qb);
        if (run.empty()) continue;
        const std::size_t span = run.span(g.stride_w), slot = tiling::ceil_even(span) + 2;
        issued.push_back(
            {p, run, used,
             tiling::get_range(core, runs.subspan(used, slot), a.x, a.xl.total, {run.offset, run.offset + span})});
        used += slot;
      }
      charge_address_ops(core, *a.address_ops, touched * kAddressOpsOnTheFly);
      std::fill(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(len), 0.0f);
      for (const Issued& i : issued) {
        i.read.handle.wait();
        const std::size_t span = i.run.span(g.stride_w);
        if (run_values.size() < span) run_values.resize(span);
        to_floats(runs, i.slot + i.read.first, span, run_values.data());
        for (std::size_t q = i.run.q0; q < i.run.q1; ++q) {
          values[i.p * g.q + q - f0] = run_values[(q - i.run.q0) * g.stride_w];
        }
      }
      charge_tile_build(core, valid_end > f0 ? valid_end - f0 : 0, g.stride_w == 1);
      put.wait();  // the row buffer is reused
      to_halves(values.data(), len, row.first(len));
      put = core.put(a.col + index * a.pitch + f0, LdmSpan<const f16>(row.first(len)));
    }
  }
  put.wait();
}

/// Whether im2col_kernel's buffers for a whole image matrix row (every output row's input run, and the row) fit
/// the free ldm, each starting aligned.
bool whole_rows_fit(Core& core, const ConvGeometry& g, std::size_t pitch) {
  constexpr std::size_t kAlign = Ldm::kDefaultAlignment;
  const auto aligned = [](std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; };
  const std::size_t runs = g.p * (tiling::ceil_even(g.q * g.stride_w) + 2) * sizeof(f16);
  return aligned(core.ldm().used()) + aligned(runs) + pitch * sizeof(f16) <= core.ldm().capacity();
}

}  // namespace

void im2col_kernel(Core& core, const Im2colArgs& a) {
  const ConvGeometry& g = a.g;
  if (!whole_rows_fit(core, g, a.pitch)) {
    im2col_in_segments(core, a);
    return;
  }
  const std::size_t rows = g.n * g.groups * g.depth();
  const std::size_t slot = tiling::ceil_even(g.q * g.stride_w) + 2;
  auto runs = core.ldm().alloc<f16>(g.p * slot);
  auto row = core.ldm().alloc<f16>(a.pitch);
  std::vector<float> values(a.pitch);
  std::vector<float> run_values(g.q * g.stride_w + 2);
  DmaHandle put;
  for (std::size_t index = tiling::worker_index(core); index < rows; index += tiling::worker_count(core)) {
    const auto [n, group, ci, ri, si] = image_row(g, index);
    struct Issued {
      std::size_t p;
      ImageRun run;
      tiling::RangeRead read;
    };
    std::vector<Issued> issued;
    for (std::size_t p = 0; p < g.p; ++p) {
      const ImageRun run = image_run(g, a.xl, n, group, ci, ri, si, p, 0, g.q);
      if (run.empty()) continue;
      issued.push_back({p, run,
                        tiling::get_range(core, runs.subspan(p * slot, slot), a.x, a.xl.total,
                                          {run.offset, run.offset + run.span(g.stride_w)})});
    }
    charge_address_ops(core, *a.address_ops, g.p * kAddressOpsOnTheFly);
    std::fill(values.begin(), values.end(), 0.0f);
    for (const auto& [p, run, read] : issued) {
      read.handle.wait();
      to_floats(runs, p * slot + read.first, run.span(g.stride_w), run_values.data());
      for (std::size_t q = run.q0; q < run.q1; ++q) values[p * g.q + q] = run_values[(q - run.q0) * g.stride_w];
    }
    charge_tile_build(core, g.pq(), g.stride_w == 1);
    put.wait();  // the row buffer is reused
    to_halves(values.data(), a.pitch, row);
    put = core.put(a.col + index * a.pitch, LdmSpan<const f16>(row));
  }
  put.wait();
}

}  // namespace ldmsim::ops
