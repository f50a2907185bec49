// The tiled matrix multiply engine (see matrix_multiply.hpp).
#include "matrix_multiply.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "ldmsim/kernels/matrix_block.hpp"

namespace ldmsim::ops {
namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

/// Block sizes: mb output rows x nb output columns per block, k in chunks of kc.
struct Blocking {
  std::size_t mb = 1, nb = 1, kc = 1;
  bool whole_rows = false;  ///< odd output pitch: blocks are whole rows, in pairs
};

/// ldm elements of the tiles of one k chunk of A (or B): stored runs of the logical [rows, cols] tile.
std::size_t tile_elements(const StoredMatrix& s, std::size_t rows, std::size_t cols) {
  return s.transposed ? tiling::block_buffer_elements(cols, rows) : tiling::block_buffer_elements(rows, cols);
}

/// ldm elements of one B tile.
std::size_t b_tile_elements(const MatrixMultiply& job, std::size_t kc, std::size_t nb) {
  return job.b_source != nullptr ? job.b_source->buffer_elements(kc, nb) : tile_elements(job.b, kc, nb);
}

std::size_t ldm_bytes(const MatrixMultiply& job, const Blocking& b) {
  constexpr std::size_t kSlack = 64;  // alignment rounding per buffer
  const std::size_t out_cols = b.whole_rows ? job.yl.chw_pitch : b.nb + 2;
  std::size_t bytes = 2 * (tile_elements(job.a, b.mb, b.kc) + b_tile_elements(job, b.kc, b.nb)) * sizeof(f16);
  if (job.has_row_bias) bytes += (job.row_bias.cols + 2) * (sizeof(f16) + sizeof(float));
  if (job.b_source != nullptr) bytes += job.b_source->resident_elements() * sizeof(f16);
  bytes += b.mb * b.nb * sizeof(float) + b.mb * out_cols * sizeof(f16);
  if (job.has_addend) bytes += tiling::block_buffer_elements(b.mb, b.nb) * sizeof(f16);
  return bytes + 7 * kSlack;
}

/// DMA transactions of reading a logical rows x cols tile of `s` (its stored runs).
double tile_transactions(const StoredMatrix& s, std::size_t rows, std::size_t cols, double transaction_elements) {
  const std::size_t runs = s.transposed ? cols : rows, length = s.transposed ? rows : cols;
  return static_cast<double>(runs) * std::ceil(static_cast<double>(length) / transaction_elements);
}

/// A ranking of blockings by estimated cycles: every block's reads (whole transactions, so narrow blocks pay for
/// the bytes they skip) spread over the groups' DMA engines, against the compute of the busiest core, plus a
/// latency per block. Only the order matters, so the DMA rate is a round 16 bytes per cycle per group.
double estimate_cycles(const Core& core, const MatrixMultiply& job, std::size_t mb, std::size_t nb) {
  const Arch& arch = core.arch();
  const double tx = static_cast<double>(arch.dma.transaction_bytes) / sizeof(f16);
  const std::size_t rows = job.yl.shape.n, workers = tiling::worker_count(core);
  const double blocks = static_cast<double>(ceil_div(rows, mb) * ceil_div(job.n, nb));
  const double transactions =
      blocks * (tile_transactions(job.a, mb, job.k, tx) +
                (job.b_source != nullptr ? static_cast<double>(job.k) * std::ceil(static_cast<double>(nb) / tx)
                                         : tile_transactions(job.b, job.k, nb, tx)));
  const double dma = transactions * static_cast<double>(arch.dma.transaction_bytes) / (16.0 * arch.core_groups);
  const double rounds = std::ceil(blocks / static_cast<double>(workers));
  const double compute =
      rounds * 2.0 * static_cast<double>(mb * nb * job.k) / arch.compute.peak_flops_per_cycle(DataType::kF32);
  return std::max(dma, compute) + rounds * 1000.0;
}

Blocking choose_blocking(Core& core, const MatrixMultiply& job) {
  const std::size_t rows = job.yl.shape.n;
  const std::size_t capacity = core.ldm().capacity() - core.ldm().used();
  Blocking best;
  best.whole_rows = job.yl.chw_pitch % 2 != 0;
  double best_cycles = -1;
  std::vector<std::size_t> row_sizes, column_sizes;
  for (std::size_t mb = best.whole_rows ? 2 : 1; mb <= 64; mb *= 2) row_sizes.push_back(std::min(mb, rows));
  if (best.whole_rows) {
    column_sizes = {job.n};
  } else {
    for (std::size_t nb = 8; nb <= 256; nb *= 2) column_sizes.push_back(std::min(nb, tiling::ceil_even(job.n)));
  }
  for (const std::size_t mb : row_sizes) {
    for (const std::size_t nb : column_sizes) {
      Blocking b{.mb = best.whole_rows ? tiling::ceil_even(mb) : mb,
                 .nb = nb,
                 .kc = std::min<std::size_t>(job.k, 32),
                 .whole_rows = best.whole_rows};
      if (ldm_bytes(job, b) > capacity) continue;
      const double cycles = estimate_cycles(core, job, b.mb, b.nb);
      if (best_cycles < 0 || cycles < best_cycles) best = b, best_cycles = cycles;
    }
  }
  if (best_cycles < 0) {  // nothing fits at k chunks of 32: the smallest blocks, k chunks shrunk below
    best.mb = best.whole_rows ? 2 : 1;
    best.nb = best.whole_rows ? job.n : std::min<std::size_t>(8, tiling::ceil_even(job.n));
  }
  // The largest k chunk that fits, up to 256 (fewer, larger requests), a multiple of the source's unit.
  const std::size_t unit = job.b_source != nullptr ? job.b_source->chunk_unit() : 1;
  const auto whole_units = [&](std::size_t kc) { return std::min(job.k, std::max(unit, kc / unit * unit)); };
  best.kc = whole_units(std::max<std::size_t>(256, unit));
  while (best.kc > unit && ldm_bytes(job, best) > capacity) best.kc = whole_units((best.kc + 1) / 2);
  return best;  // when even this does not fit, the allocations trap with the ldm numbers
}

/// The block read of the logical tile rows [r0, r1) x cols [c0, c1) of stored matrix `index`.
tiling::BlockShape tile_block(const StoredMatrix& s, std::size_t index, std::size_t r0, std::size_t r1, std::size_t c0,
                              std::size_t c1) {
  const std::size_t pitch = s.layout.chw_pitch;
  if (s.transposed) return {(index * s.rows + c0) * pitch + r0, pitch, c1 - c0, r1 - r0};
  return {(index * s.rows + r0) * pitch + c0, pitch, r1 - r0, c1 - c0};
}

/// The logical tile (rows x cols, row-major floats) from a completed read.
void unpack_tile(const StoredMatrix& s, LdmSpan<f16> buf, const tiling::BlockRead& read, std::size_t rows,
                 std::size_t cols, std::vector<float>& out) {
  if (!s.transposed) {
    for (std::size_t r = 0; r < rows; ++r) to_floats(buf, read.start(r), cols, out.data() + r * cols);
    return;
  }
  std::vector<float> run(rows);
  for (std::size_t c = 0; c < cols; ++c) {
    to_floats(buf, read.start(c), rows, run.data());
    for (std::size_t r = 0; r < rows; ++r) out[r * cols + c] = run[r];
  }
}

/// acc[rows, cols] += a[rows, depth] b[depth, cols]; acc rows `acc_pitch` apart.
void multiply_add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols, std::size_t depth,
                  std::size_t acc_pitch) {
  for (std::size_t i = 0; i < rows; ++i) {
    float* __restrict out = acc + i * acc_pitch;
    for (std::size_t t = 0; t < depth; ++t) {
      const float x = a[i * depth + t];
      const float* __restrict row = b + t * cols;
      for (std::size_t j = 0; j < cols; ++j) out[j] += x * row[j];
    }
  }
}

/// One output block: rows [g0, g1) of the [batches * m, n] output, columns [j0, j1).
struct OutputBlock {
  std::size_t g0, g1, j0, j1;
};

class BlockRunner {
 public:
  BlockRunner(Core& core, const MatrixMultiply& job, const Blocking& blocking)
      : core_(core), job_(job), b_(blocking), model_(core.arch().compute) {
    for (auto& set : sets_) {
      set.a = core.ldm().alloc<f16>(tile_elements(job.a, b_.mb, b_.kc));
      set.b = core.ldm().alloc<f16>(b_tile_elements(job, b_.kc, b_.nb));
    }
    acc_ldm_ = core.ldm().alloc<float>(b_.mb * b_.nb);
    out_cols_ = b_.whole_rows ? job.yl.chw_pitch : b_.nb + 2;
    out_ = core.ldm().alloc<f16>(b_.mb * out_cols_);
    if (job.has_addend) addend_ = core.ldm().alloc<f16>(tiling::block_buffer_elements(b_.mb, b_.nb));
    if (job.has_row_bias) read_row_bias();
    if (job.b_source != nullptr && job.b_source->resident_elements() > 0) {
      resident_ = core.ldm().alloc<f16>(job.b_source->resident_elements());
      job.b_source->load_resident(core, resident_);
    }
    a_tile_.resize(b_.mb * b_.kc);
    b_tile_.resize(b_.kc * b_.nb);
    acc_.resize(b_.mb * b_.nb);
  }

  void run(const OutputBlock& block) {
    const std::size_t width = block.j1 - block.j0;
    std::fill(acc_.begin(), acc_.end(), 0.0f);
    // Segments of the block's rows within one output batch.
    for (std::size_t g = block.g0; g < block.g1;) {
      const std::size_t batch = g / job_.m, i0 = g % job_.m;
      const std::size_t i1 = std::min(job_.m, i0 + (block.g1 - g));
      multiply_segment(batch, i0, i1, block, acc_.data() + (g - block.g0) * width);
      g += i1 - i0;
    }
    write(block);
  }

  void finish() {
    for (DmaHandle& h : puts_) h.wait();
    puts_.clear();
  }

 private:
  struct TileSet {
    LdmSpan<f16> a, b;
    tiling::BlockRead a_read, b_read;
    PendingTile b_pending;
    std::size_t k0 = 0, k1 = 0;
  };

  void issue(TileSet& set, std::size_t batch, std::size_t i0, std::size_t i1, const OutputBlock& block,
             std::size_t k0) {
    set.k0 = k0;
    set.k1 = std::min(job_.k, k0 + b_.kc);
    set.a_read = tiling::get_block(core_, set.a, job_.a.base, job_.a.layout.total,
                                   tile_block(job_.a, job_.a_batch[batch], i0, i1, set.k0, set.k1));
    if (job_.b_source != nullptr) {
      set.b_pending =
          job_.b_source->issue(core_, set.b, resident_, job_.b_batch[batch], set.k0, set.k1, block.j0, block.j1);
    } else {
      set.b_read = tiling::get_block(core_, set.b, job_.b.base, job_.b.layout.total,
                                     tile_block(job_.b, job_.b_batch[batch], set.k0, set.k1, block.j0, block.j1));
    }
  }

  void multiply_segment(std::size_t batch, std::size_t i0, std::size_t i1, const OutputBlock& block, float* acc) {
    const std::size_t rows = i1 - i0, width = block.j1 - block.j0;
    std::size_t current = 0;
    issue(sets_[current], batch, i0, i1, block, 0);
    for (std::size_t k0 = 0; k0 < job_.k; k0 += b_.kc) {
      TileSet& set = sets_[current];
      // The next chunk's reads go out before this chunk is waited for and multiplied (double buffering).
      if (k0 + b_.kc < job_.k) issue(sets_[current ^ 1], batch, i0, i1, block, k0 + b_.kc);
      set.a_read.wait();
      set.b_read.wait();
      for (DmaHandle& h : set.b_pending.handles) h.wait();
      const std::size_t depth = set.k1 - set.k0;
      unpack_tile(job_.a, set.a, set.a_read, rows, depth, a_tile_);
      if (job_.b_source != nullptr) {
        job_.b_source->unpack(core_, set.b, set.b_pending, job_.b_batch[batch], set.k0, set.k1, block.j0, block.j1,
                              b_tile_);
      } else {
        unpack_tile(job_.b, set.b, set.b_read, depth, width, b_tile_);
      }
      multiply_add(a_tile_.data(), b_tile_.data(), acc, rows, width, depth, width);
      core_.compute(model_.matmul_tile(DataType::kF32, rows, width, depth, k0 > 0));
      current ^= 1;
    }
  }

  /// Y = alpha * acc (+ beta * C) for the block's logical elements, zeros in the padding it owns; then put.
  void write(const OutputBlock& block) {
    finish();  // out_ is reused
    const std::size_t width = block.j1 - block.j0, pitch = job_.yl.chw_pitch;
    const std::size_t stored_rows = job_.yl.total / pitch;
    const std::size_t g_end = block.g1 == job_.yl.shape.n ? stored_rows : block.g1;
    const std::size_t count = b_.whole_rows ? pitch : (block.j1 == job_.n ? pitch : block.j1) - block.j0;
    std::vector<float> values((g_end - block.g0) * count, 0.0f);
    const std::vector<float> addend = read_addend(block);
    const std::size_t c_rows = job_.c.matrix.rows, c_cols = job_.c.matrix.cols;
    for (std::size_t g = block.g0; g < block.g1; ++g) {
      const std::size_t r = g - block.g0;
      for (std::size_t j = 0; j < width; ++j) {
        float v = job_.alpha * acc_[r * width + j];
        if (job_.has_row_bias) v += row_bias_[g % row_bias_.size()];
        if (job_.has_addend) {
          const std::size_t cr = c_rows == 1 ? 0 : r, cc = c_cols == 1 ? 0 : j;
          v += job_.c.beta * addend[cr * (c_cols == 1 ? 1 : width) + cc];
        }
        values[r * count + j] = v;
      }
    }
    const std::uint32_t terms = 1u + (job_.has_addend ? 1u : 0u) + (job_.has_row_bias ? 1u : 0u);
    core_.compute(model_.elementwise(DataType::kF32, (block.g1 - block.g0) * width, terms, terms, 1));
    to_halves(values.data(), values.size(), out_);
    puts_ = tiling::put_block(core_, job_.y, out_, {block.g0 * pitch + block.j0, pitch, g_end - block.g0, count});
  }

  /// The whole bias vector, once per core (it is small: one value per output channel).
  void read_row_bias() {
    const StoredMatrix& bias = job_.row_bias;
    auto buf = core_.ldm().alloc<f16>(tiling::block_buffer_elements(1, bias.cols));
    tiling::BlockRead read =
        tiling::get_block(core_, buf, bias.base, bias.layout.total, tile_block(bias, 0, 0, 1, 0, bias.cols));
    read.wait();
    row_bias_.resize(bias.cols);
    to_floats(buf, read.start(0), bias.cols, row_bias_.data());
    core_.ldm().alloc<float>(bias.cols);  // the fp32 copy kept beside the tiles
  }

  /// The addend's values for the block ([rows or 1] x [width or 1]); a gemm block never crosses a batch.
  std::vector<float> read_addend(const OutputBlock& block) {
    if (!job_.has_addend) return {};
    const StoredMatrix& c = job_.c.matrix;
    const std::size_t i0 = block.g0 % job_.m, rows = c.rows == 1 ? 1 : block.g1 - block.g0;
    const std::size_t r0 = c.rows == 1 ? 0 : i0, c0 = c.cols == 1 ? 0 : block.j0;
    const std::size_t cols = c.cols == 1 ? 1 : block.j1 - block.j0;
    tiling::BlockRead read =
        tiling::get_block(core_, addend_, c.base, c.layout.total, tile_block(c, 0, r0, r0 + rows, c0, c0 + cols));
    read.wait();
    std::vector<float> out(rows * cols);
    unpack_tile(c, addend_, read, rows, cols, out);
    return out;
  }

  Core& core_;
  const MatrixMultiply& job_;
  Blocking b_;
  const ComputeModel& model_;
  std::array<TileSet, 2> sets_;
  LdmSpan<float> acc_ldm_;
  LdmSpan<f16> out_, addend_, resident_;
  std::size_t out_cols_ = 0;
  std::vector<float> a_tile_, b_tile_, acc_, row_bias_;
  std::vector<DmaHandle> puts_;
};

}  // namespace

void matrix_multiply_kernel(Core& core, const MatrixMultiply& job) {
  const Blocking blocking = choose_blocking(core, job);
  const std::size_t rows = job.yl.shape.n;
  const std::size_t row_blocks = ceil_div(rows, blocking.mb), column_blocks = ceil_div(job.n, blocking.nb);
  const std::size_t me = tiling::worker_index(core), workers = tiling::worker_count(core);
  if (me >= row_blocks * column_blocks) return;
  BlockRunner runner(core, job, blocking);
  for (std::size_t unit = me; unit < row_blocks * column_blocks; unit += workers) {
    const std::size_t rb = unit / column_blocks, cb = unit % column_blocks;
    runner.run({rb * blocking.mb, std::min(rows, (rb + 1) * blocking.mb), cb * blocking.nb,
                std::min(job.n, (cb + 1) * blocking.nb)});
  }
  runner.finish();
}

std::vector<std::size_t> broadcast_batches(const Shape& input_batch, const Shape& output_batch) {
  const auto strides = broadcast_strides(input_batch, output_batch);
  std::vector<std::size_t> out(output_batch.elements());
  const std::size_t rank = output_batch.rank();
  for (std::size_t b = 0; b < out.size(); ++b) {
    std::size_t rest = b, index = 0;
    for (std::size_t axis = rank; axis-- > 0;) {
      index += (rest % output_batch[axis]) * strides[axis];
      rest /= output_batch[axis];
    }
    out[b] = index;
  }
  return out;
}

}  // namespace ldmsim::ops
