// The tiled matrix multiply engine (see matrix_multiply.hpp).
#include "matrix_multiply.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "ldmsim/kernels/matrix_block.hpp"
#include "ldmsim/sim/flat_memo.hpp"
#include "per_arch.hpp"
#include "product_queue.hpp"
#include "tile_math.hpp"
#include "tile_memo.hpp"

namespace ldmsim::ops {

void describe(std::vector<std::uint64_t>& key, const Layout& l) {
  key.insert(key.end(), {l.shape.n, l.shape.c, l.shape.h, l.shape.w, static_cast<std::uint64_t>(l.shape.rank),
                         l.w_pitch, l.hw_pitch, l.chw_pitch, l.total});
}

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

[[gnu::noinline]] double ceil_of_doubles(std::size_t a, std::size_t b) {
  return std::ceil(static_cast<double>(a) / static_cast<double>(b));
}

/// std::ceil(double(a) / double(b)), in integers where that is the same number (a and b below 2^53, b not 0): the
/// blocking search asks for a hundred thousand such quotients of its sizes.
inline double ceil_quotient(std::size_t a, std::size_t b) {
  constexpr std::size_t kExact = std::size_t{1} << 53;
  if (b != 0 && a < kExact && b < kExact) [[likely]]
    return static_cast<double>(ceil_div(a, b));
  return ceil_of_doubles(a, b);
}

/// Teams share B tiles: their leader reads each tile once for every member (the members take neighbouring row
/// blocks of one batch and the same columns), a mesh row in ROW mode or a whole core group in BCAST mode.
enum class TeamScope : std::uint8_t { kNone, kRow, kGroup };

/// Cores of a team of `scope`.
std::size_t team_members(const Arch& arch, TeamScope scope) {
  switch (scope) {
    case TeamScope::kRow:
      return arch.cols;
    case TeamScope::kGroup:
      return arch.cores_per_group();
    case TeamScope::kNone:
      break;
  }
  return 1;
}

/// Teams of `scope` on the machine: one per mesh row of each group, or one per group.
std::size_t team_count(const Arch& arch, TeamScope scope) {
  return arch.total_cores() / team_members(arch, scope);
}

/// Block sizes: mb output rows x nb output columns per block, k in chunks of kc.
struct Blocking {
  std::size_t mb = 1, nb = 1, kc = 1;
  std::size_t batches = 1;  ///< output batches per block: > 1 shares each A tile among them (one A for all)
  bool whole_rows = false;  ///< odd output pitch: blocks are whole rows, in pairs
  TeamScope team = TeamScope::kNone;
  /// Each core keeps its A rows over the whole k in ldm (read once: a_rows_fixed says they never change).
  bool a_resident = false;
};

/// True when blocks may span several batches: every batch multiplies the same A, and rows stay word-owned.
bool can_share_a(const MatrixMultiply& job, bool whole_rows) {
  return !whole_rows && !job.has_addend && job.a_batch.size() > 1 &&
         std::all_of(job.a_batch.begin(), job.a_batch.end(), [&](std::size_t i) { return i == job.a_batch[0]; });
}

/// ldm elements of the tiles of one k chunk of A (or B): stored runs of the logical [rows, cols] tile.
std::size_t tile_elements(const StoredMatrix& s, std::size_t rows, std::size_t cols) {
  return s.transposed ? tiling::block_buffer_elements(cols, rows) : tiling::block_buffer_elements(rows, cols);
}

/// ldm elements of one B tile.
std::size_t b_tile_elements(const MatrixMultiply& job, std::size_t kc, std::size_t nb) {
  return job.b_source != nullptr ? job.b_source->buffer_elements(kc, nb) : tile_elements(job.b, kc, nb);
}

/// Zero rows the output's layout has after its last row (a naive plan's even row count): the block that writes
/// the last rows writes them too.
std::size_t padding_rows(const MatrixMultiply& job) {
  return job.yl.total / job.yl.chw_pitch - job.yl.shape.n;
}

/// The block read of the logical tile rows [r0, r1) x cols [c0, c1) of stored matrix `index`.
tiling::BlockShape tile_block(const StoredMatrix& s, std::size_t index, std::size_t r0, std::size_t r1, std::size_t c0,
                              std::size_t c1) {
  const std::size_t pitch = s.layout.chw_pitch;
  if (s.transposed) return {(index * s.rows + c0) * pitch + r0, pitch, c1 - c0, r1 - r0};
  return {(index * s.rows + r0) * pitch + c0, pitch, r1 - r0, c1 - c0};
}

/// Engine cycles of reading the logical rows x cols panel of `s` that starts at logical element `origin` across k
/// (a column for B, a row for A), in chunks of kc along k (`k_along_rows`: k runs along the panel's rows, as for
/// B; else along its columns, as for A), each chunk one get_block of its tile into a buffer of `buffer` elements.
double panel_at(const StoredMatrix& s, std::size_t origin, std::size_t rows, std::size_t cols, std::size_t kc,
                bool k_along_rows, std::size_t buffer, const tiling::ReadPricer& price) {
  const std::size_t k = k_along_rows ? rows : cols;
  double cycles = 0;
  for (std::size_t k0 = 0; k0 < k; k0 += kc) {  // each chunk's tile (of the first stored matrix)
    const std::size_t k1 = std::min(k, k0 + kc);
    const tiling::BlockShape shape = k_along_rows ? tile_block(s, 0, k0, k1, origin, origin + cols)
                                                  : tile_block(s, 0, origin, origin + rows, k0, k1);
    cycles += price.block(shape.rows, shape.count, shape.pitch, buffer, shape.first);
  }
  return cycles;
}

/// Engine cycles of reading one block's panel (rows x cols, as panel_at). When blocks start along a stored row
/// (B's column blocks, a transposed A's row blocks), every run of a tile shares its block's alignment within a
/// transaction, so the cost is averaged over the blocks that cut `extent` (N for B, M for A); misaligned runs
/// cost more (gemm-sized B cut in 172-column blocks: 2x the cycles of 128). Block origins repeat their
/// alignment with a period of at most a transaction: one period of blocks (and a narrower last one) is priced.
/// When blocks start on other stored rows, a tile's runs (one per stored row) already sample the alignments:
/// the block at origin 0 stands for all.
double stored_panel_cost(const StoredMatrix& s, std::size_t rows, std::size_t cols, std::size_t kc, bool k_along_rows,
                         std::size_t extent, const tiling::ReadPricer& price) {
  const std::size_t size = k_along_rows ? cols : rows;  // the block's size across k
  const std::size_t buffer =
      tile_elements(s, k_along_rows ? std::min(kc, rows) : rows, k_along_rows ? cols : std::min(kc, cols));
  const auto panel = [&](std::size_t origin, std::size_t width) {
    return k_along_rows ? panel_at(s, origin, rows, width, kc, true, buffer, price)
                        : panel_at(s, origin, width, cols, kc, false, buffer, price);
  };
  if (k_along_rows == s.transposed) return panel(0, size);  // blocks start on other stored rows
  const std::size_t align = price.transaction_elements();
  const std::size_t step = size % align;
  const std::size_t period = step == 0 ? 1 : align / std::gcd(align, step);
  const std::size_t full = extent / size, last = extent % size;
  double cycles = 0;
  for (std::size_t b = 0; b < std::min(period, full); ++b) {
    cycles += static_cast<double>((full - b + period - 1) / period) * panel(b * size, size);
  }
  if (last > 0) cycles += panel(full * size, last);
  const std::size_t blocks = full + (last > 0 ? 1 : 0);
  return blocks > 0 ? cycles / static_cast<double>(blocks) : panel(0, size);
}

/// block_count's rows of blocks (or team units): the blocks are these times the column blocks.
std::size_t block_rows(const MatrixMultiply& job, const Blocking& b, std::size_t members) {
  if (b.team != TeamScope::kNone) return job.a_batch.size() * ceil_div(job.m, b.mb * members);
  if (b.batches > 1) return ceil_div(job.a_batch.size(), b.batches) * ceil_div(job.m, b.mb);
  return ceil_div(job.yl.shape.n, b.mb);
}

/// Blocks of a blocking: [batch groups x] row blocks x column blocks; for teams, team units (a row block per
/// member of a team of `members` cores).
std::size_t block_count(const MatrixMultiply& job, const Blocking& b, std::size_t members = 1) {
  return block_rows(job, b, members) * ceil_div(job.n, b.nb);
}

/// True when every block a core takes multiplies the same rows of the same stored A, so they can stay in its ldm:
/// a team's rows (its unit's row span and the batch's A) or a plain block's (exactly one batch's m rows) repeat
/// over the units dealt to it; shared-A batch blocks cover m. A stored transposed (gemm's transA) is left to
/// chunks: its panel is k runs of a few elements.
bool a_rows_fixed(const MatrixMultiply& job, const Blocking& b, const Arch& arch) {
  if (b.whole_rows || job.a.transposed) return false;
  if (b.batches > 1) return b.mb >= job.m;  // every batch of such a blocking multiplies the same A
  const bool team = b.team != TeamScope::kNone;
  if (!team && b.mb != job.m) return false;
  const std::size_t column_blocks = ceil_div(job.n, b.nb), members = team_members(arch, b.team);
  const std::size_t supers = team ? ceil_div(job.m, b.mb * members) : 1;
  const std::size_t stride = team_count(arch, b.team);
  const auto key = [&](std::size_t unit) {  // the stored A and the row span of a unit (the kernel's dealing)
    const std::size_t rows = unit / column_blocks;
    return std::pair{job.a_batch[rows / supers], rows % supers};
  };
  // Every unit's key equals the key `stride` units before. Keys change only where a unit or the one `stride`
  // before starts a row of column blocks, so one unit per stretch between such starts stands for the stretch.
  const std::size_t units = block_count(job, b, members);
  for (std::size_t unit = stride; unit < units;) {
    if (key(unit) != key(unit - stride)) return false;
    unit = std::min((unit / column_blocks + 1) * column_blocks,
                    ((unit - stride) / column_blocks + 1) * column_blocks + stride);
  }
  return true;
}

/// Engine cycles of putting one block's output, averaged over the column blocks as stored_panel_cost averages
/// reads: blocks start along a stored row, so their alignment repeats with a period of at most a transaction.
/// The sum is kept (PutMemo); its blocks at each alignment seldom repeat (one in 20 on SqueezeNet's plan), so they
/// are priced without the pricer's memo, which they would only grow.
double put_cost(const MatrixMultiply& job, const Blocking& b, const tiling::ReadPricer& price) {
  const std::size_t pitch = job.yl.chw_pitch, rows = std::min(b.mb, job.yl.shape.n);
  const auto put = [&](std::size_t j0, std::size_t width) {
    return price.block_unkept(rows, width, pitch, rows * width, j0);
  };
  if (b.whole_rows) return put(0, pitch);
  const std::size_t step = b.nb % price.transaction_elements();
  const std::size_t period =
      step == 0 ? 1 : price.transaction_elements() / std::gcd(price.transaction_elements(), step);
  const std::size_t blocks = ceil_div(job.n, b.nb), others = blocks - 1;
  double cycles = 0;
  for (std::size_t c = 0; c < std::min(period, others); ++c) {
    cycles += static_cast<double>((others - c + period - 1) / period) * put(c * b.nb, b.nb);
  }
  cycles += put(others * b.nb, pitch - others * b.nb);  // the last block writes to the row's end
  return cycles / static_cast<double>(blocks);
}

/// A ranking of blockings by estimated cycles. A core runs its units one after another; each unit reads its k
/// chunks double-buffered (the first chunk's reads exposed, later ones behind the previous chunk's multiply) and
/// then puts its block. Reads and puts are priced by the arch's timing model as the group's channels serve them
/// for every unit the group runs at once (blocks are dealt round-robin over the groups; an A tile per block and
/// chunk, B per batch, once per team unit); multiplies by the compute model; plus a latency per unit. A resident
/// A panel is read once per core before its first chunk.
/// The panel and put prices depend on few of a blocking's sizes and repeat across the search's candidates, so
/// each is priced once per job (the search ranks thousands of candidates on the control core).
/// Output put prices depend only on the output's pitch and width and the block: kept across jobs (a network's layers
/// share few output layouts), keyed by the pricer that priced them.
/// In 32-bit fields, so that a slot of the memo takes 32 bytes (half of what it would in 64-bit ones): the memo grows
/// to thousands of keys over a network's plan, and its pages are faulted in as it grows. Keys beyond the fields are
/// priced without it.
struct PutKey {
  std::uint32_t pricer, pitch, n, rows, nb;
  bool operator==(const PutKey&) const = default;
  /// The key of these values, when they fit its fields.
  static std::optional<PutKey> of(std::uint64_t pricer, std::size_t pitch, std::size_t n, std::size_t rows,
                                  std::size_t nb) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
    if (pricer > kMax || pitch > kMax || n > kMax || rows > kMax || nb > kMax) return std::nullopt;
    return PutKey{static_cast<std::uint32_t>(pricer), static_cast<std::uint32_t>(pitch), static_cast<std::uint32_t>(n),
                  static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(nb)};
  }
};
struct PutKeyHash {
  std::size_t operator()(const PutKey& k) const { return hash_words({k.pricer, k.pitch, k.n, k.rows, k.nb}); }
};
using PutMemo = FlatMemo<PutKey, double, PutKeyHash>;

/// A memo of prices keyed by two sizes of a blocking.
struct SizePair {
  std::size_t first, second;
  bool operator==(const SizePair&) const = default;
};
struct SizePairHash {  // sizes below 2^32 pack into one word (FlatMemo mixes it); larger ones only collide
  std::size_t operator()(const SizePair& key) const { return (key.first << 32) ^ key.second; }
};
using SizePairMemo = FlatMemo<SizePair, double, SizePairHash>;
/// Sizes (ldm elements) keyed by two sizes of a blocking.
using TileSizeMemo = FlatMemo<SizePair, std::size_t, SizePairHash>;

/// ldm bytes a core of a blocking of `job` allocates, for the search's thousands of blockings of one job: what does
/// not depend on the blocking is worked out once, and each B tile's size once per (k chunk, width) (a conv's image
/// tile size is dear to work out). `line`: the DMA transaction a pack buffer is aligned and rounded to.
class LdmFootprint {
 public:
  /// What the footprint adds for the buffers' alignment rounding (64 bytes for each of up to 8 buffers): a blocking
  /// whose footprint exceeds the store by less may still fit, and one exceeding it by more never does.
  static constexpr std::size_t kSlackBytes = 8 * 64;

  /// `b_tiles` is forgotten (it held another job's).
  LdmFootprint(const MatrixMultiply& job, std::size_t line, TileSizeMemo& b_tiles)
      : job_(job), b_tiles_(b_tiles), padding_rows_(padding_rows(job)) {
    b_tiles_.forget();
    fixed_ = kSlackBytes;
    if (job.packs != nullptr) {  // the pack holds the bias and the resident data; the bias's fp32 copy beside it
      fixed_ += (job.packs->max_bytes + line - 1) / line * line + line;  // rounded, and its alignment
      if (job.has_row_bias) fixed_ += job.row_bias.cols * sizeof(float);
    } else {
      if (job.has_row_bias) fixed_ += (job.row_bias.cols + 2) * (sizeof(f16) + sizeof(float));
      if (job.b_source != nullptr) fixed_ += job.b_source->resident_elements() * sizeof(f16);
    }
  }

  std::size_t operator()(const Blocking& b) const {
    const MatrixMultiply& job = job_;
    const std::size_t out_cols = b.whole_rows ? job.yl.chw_pitch : b.nb + 2;
    const std::size_t out_rows = b.mb + padding_rows_;
    const std::size_t a_elements =
        b.a_resident ? tile_elements(job.a, b.mb, job.k) : 2 * tile_elements(job.a, b.mb, b.kc);
    const std::size_t b_tile = b_tiles_.get_or({b.kc, b.nb}, [&] { return b_tile_elements(job, b.kc, b.nb); });
    std::size_t bytes = (a_elements + 2 * b.batches * b_tile) * sizeof(f16) + fixed_;
    bytes += b.batches * b.mb * b.nb * sizeof(float) + out_rows * out_cols * sizeof(f16);
    if (job.has_addend) bytes += tiling::block_buffer_elements(b.mb, b.nb) * sizeof(f16);
    if (job.has_residual) bytes += tiling::block_buffer_elements(b.mb, b.nb) * sizeof(f16);
    return bytes;
  }

 private:
  const MatrixMultiply& job_;
  TileSizeMemo& b_tiles_;
  std::size_t padding_rows_;
  std::size_t fixed_ = 0;
};

/// One search's prices of panels, multiplies and puts: they hold for one job, so each search forgets them, but the
/// machine keeps their tables (BlockingSearches) so that a search neither grows them from nothing nor faults their
/// memory in again.
struct EstimatorMemos {
  SizePairMemo a, b, b_broadcast, multiplies;
  SizePairMemo puts;                ///< this job's put prices, in front of the machine's PutMemo
  TileSizeMemo b_tiles;             ///< B tiles' ldm elements per (k chunk, width) (LdmFootprint)
  std::vector<std::size_t> chunks;  ///< the search's k chunks per block size (choose_blocking)
  void forget() {
    for (SizePairMemo* memo : {&a, &b, &b_broadcast, &multiplies, &puts}) memo->forget();
    b_tiles.forget();
  }
};

/// Where a blocking's units fall on the machine: cores per team unit, and the units each group runs, at once and in
/// rounds. Blockings that differ only in k chunk or resident A share it, so the search computes it once for them.
struct BlockGrid {
  double members, units_per_group, concurrent, rounds;
};

class BlockingEstimator {
 public:
  /// `broadcast` prices a group team leader's B reads (BCAST); `memos` are forgotten (they held another job's).
  BlockingEstimator(const Arch& arch, const tiling::ReadPricer& price, const tiling::ReadPricer& broadcast,
                    PutMemo& puts, EstimatorMemos& memos, const MatrixMultiply& job,
                    MergedReads merged = MergedReads::kApart)
      : arch_(arch), price_(price), broadcast_(broadcast), puts_(puts), memos_(memos), job_(job), merged_(merged) {
    memos_.forget();
  }

  /// The grid of blockings of `members` cores per unit and `units` units (block_count).
  BlockGrid grid(std::size_t members, std::size_t units) const {
    const std::size_t cores = arch_.rows * arch_.cols;
    const double units_per_group = ceil_quotient(units, arch_.core_groups);
    const double concurrent =  // units run at once
        std::min(units_per_group, members > 0 ? static_cast<double>(cores / members)
                                              : std::floor(static_cast<double>(cores) / static_cast<double>(members)));
    const auto whole = [](double v) { return static_cast<std::size_t>(v); };  // integer-valued, below 2^53
    return {static_cast<double>(members), units_per_group, concurrent,
            concurrent > 0 && units_per_group < 0x1p53 ? ceil_quotient(whole(units_per_group), whole(concurrent))
                                                       : std::ceil(units_per_group / concurrent)};
  }
  BlockGrid grid(const Blocking& b) const {
    const std::size_t members = team_members(arch_, b.team);
    return grid(members, block_count(job_, b, members));
  }

  /// The estimate, or, when it cannot be below `beat`, any value not below it: the multiply and then the put (the
  /// search's dearest prices) are left unpriced once the estimate without them reaches `beat`. Every term is a sum
  /// or product of non-negative prices and IEEE rounding is monotonic, so leaving a price out (as zero) never
  /// raises the estimate: the search chooses the blocking and estimate that pricing every candidate in full would.
  double cycles(const Blocking& b, double beat = std::numeric_limits<double>::infinity()) {
    return cycles(b, grid(b), beat);
  }
  /// ... with b's grid at hand.
  double cycles(const Blocking& b, const BlockGrid& at, double beat) {
    const Arch& arch = arch_;
    const MatrixMultiply& job = job_;
    const tiling::ReadPricer& price = price_;
    const auto cores = static_cast<double>(arch.rows * arch.cols);
    // A team unit is a block per member that read B once.
    const bool team = b.team != TeamScope::kNone, group_team = b.team == TeamScope::kGroup;
    const double members = at.members, units_per_group = at.units_per_group, concurrent = at.concurrent;
    const double rounds = at.rounds;
    // A plain block of rows of several output batches multiplies each batch's segment on its own.
    const bool segmented = !team && b.batches == 1;
    const std::size_t rows = segmented ? std::min(b.mb, job.m) : b.mb;
    const double segments = ceil_quotient(b.mb, rows);
    const double a_cost = segments * a_panel(rows, b.a_resident ? job.k : b.kc);
    const double b_cost = group_team ? b_panel_broadcast(b.kc, b.nb) : b_panel(b.kc, b.nb);
    const double batches = static_cast<double>(b.batches) * segments;
    const double chunks = ceil_quotient(job.k, b.kc);
    const double a_reads = b.a_resident ? 0.0 : members * a_cost;
    // A group team's B goes out in BCAST mode, which a model may serve on channels of its own: A and B are then
    // priced as served one after the other all the same.
    const double chunk_reads =
        group_team ? concurrent * (a_reads / price.channels() + batches * b_cost / broadcast_.channels()) / chunks
                   : concurrent * (a_reads + batches * b_cost) / chunks / price.channels();
    const double a_prefix = b.a_resident ? std::min(units_per_group * members, cores) * a_cost / price.channels() : 0.0;
    const double barriers = team ? rounds * chunks * static_cast<double>(arch.barrier_cycles) : 0.0;
    const auto estimate = [&](double chunk_compute, double puts) {
      const double unit = chunk_reads + (chunks - 1) * std::max(chunk_reads, chunk_compute) + chunk_compute + puts;
      return rounds * (unit + 1000.0) + a_prefix + barriers;
    };
    if (const double reads_only = estimate(0.0, 0.0); reads_only >= beat) return reads_only;
    const double chunk_compute = batches * multiply(rows, b.nb) / chunks;
    if (const double without_puts = estimate(chunk_compute, 0.0); without_puts >= beat) return without_puts;
    return estimate(chunk_compute, concurrent * members * static_cast<double>(b.batches) * put(b) / price.channels());
  }

 private:
  /// One block's A panel of `rows` rows over k in chunks of `kc`.
  double a_panel(std::size_t rows, std::size_t kc) {
    return memos_.a.get_or({rows, kc},
                           [&] { return stored_panel_cost(job_.a, rows, job_.k, kc, false, job_.m, price_); });
  }
  /// One block's B panel of `nb` columns over k in chunks of `kc`.
  double b_panel(std::size_t kc, std::size_t nb) {
    return memos_.b.get_or({kc, nb}, [&] {
      return job_.b_source != nullptr ? job_.b_source->panel_cost(job_.k, kc, nb, price_, merged_)
                                      : stored_panel_cost(job_.b, job_.k, nb, kc, true, job_.n, price_);
    });
  }
  /// ... of a stored B, read by a group team's leader for the whole group (BCAST).
  double b_panel_broadcast(std::size_t kc, std::size_t nb) {
    return memos_.b_broadcast.get_or(
        {kc, nb}, [&] { return stored_panel_cost(job_.b, job_.k, nb, kc, true, job_.n, broadcast_); });
  }
  /// A block's multiply over the whole k, with its tile builds.
  double multiply(std::size_t rows, std::size_t nb) {
    return memos_.multiplies.get_or({rows, nb}, [&] {
      const ComputeModel& model = arch_.compute;
      const double build = job_.b_source != nullptr ? job_.b_source->build_cycles(job_.k, nb, model) : 0.0;
      return static_cast<double>(model.cycles(model.matmul_tile(DataType::kF32, rows, nb, job_.k, false))) + build;
    });
  }
  /// A block's put (PutMemo, asked once per search for each of its keys).
  double put(const Blocking& b) {
    const std::size_t rows = std::min(b.mb, job_.yl.shape.n), width = b.whole_rows ? 0 : b.nb;
    return memos_.puts.get_or({rows, width}, [&] {
      const std::optional<PutKey> key = PutKey::of(price_.id(), job_.yl.chw_pitch, job_.n, rows, width);
      return key ? puts_.get_or(*key, [&] { return put_cost(job_, b, price_); }) : put_cost(job_, b, price_);
    });
  }

  const Arch& arch_;
  const tiling::ReadPricer& price_;
  const tiling::ReadPricer& broadcast_;
  PutMemo& puts_;
  EstimatorMemos& memos_;
  const MatrixMultiply& job_;
  MergedReads merged_;
};

/// The blocking the search ranks first, and its estimate.
struct ChosenBlocking {
  Blocking blocking;
  double estimated_cycles = 0;
};

/// What the search needs besides the job: the arch's read pricer, the put memo, and whether it may prune.
struct SearchTools {
  const tiling::ReadPricer& price;
  const tiling::ReadPricer& broadcast;  ///< prices BCAST reads
  PutMemo& puts;
  EstimatorMemos& memos;
  BlockingSearch mode;
};

ChosenBlocking choose_blocking(const Arch& arch, const MatrixMultiply& job, const SearchTools& tools) {
  BlockingEstimator estimator(arch, tools.price, tools.broadcast, tools.puts, tools.memos, job);
  const std::size_t rows = job.yl.shape.n;
  const std::size_t capacity = arch.ldm_bytes;  // a kernel starts with an empty local store
  Blocking best;
  best.whole_rows = job.yl.chw_pitch % 2 != 0;
  double best_cycles = -1;
  // Every block height up to 64 (so the blocks can match the cores), and column widths of powers of two or even
  // shares of the row.
  std::vector<std::size_t> row_sizes, column_sizes;
  for (std::size_t mb = best.whole_rows ? 2 : 1; mb <= std::min<std::size_t>(64, tiling::ceil_even(rows));
       mb += best.whole_rows ? 2 : 1) {
    row_sizes.push_back(mb);
  }
  if (best.whole_rows) {
    column_sizes = {job.n};
  } else {
    for (std::size_t nb = 8; nb <= 256; nb *= 2) column_sizes.push_back(std::min(nb, tiling::ceil_even(job.n)));
    for (std::size_t parts = 1; parts <= 8; ++parts) {
      const std::size_t nb = tiling::ceil_even((job.n + parts - 1) / parts);
      if (nb >= 8 && nb <= 256) column_sizes.push_back(nb);
    }
    std::sort(column_sizes.begin(), column_sizes.end());
    column_sizes.erase(std::unique(column_sizes.begin(), column_sizes.end()), column_sizes.end());
  }
  const std::size_t unit = job.b_source != nullptr ? job.b_source->chunk_unit() : 1;
  const auto whole_units = [&](std::size_t kc) { return std::min(job.k, std::max(unit, kc / unit * unit)); };
  // A blocking's k chunk: the largest that fits, up to 256 (fewer, larger requests), a multiple of the source's
  // unit; blockings that do not fit chunks of 32 are not ranked.
  const std::size_t smallest_chunk = whole_units(std::max<std::size_t>(32, unit));
  const LdmFootprint footprint(job, arch.dma.transaction_bytes, tools.memos.b_tiles);
  const auto fit_chunk = [&](Blocking& b) {
    b.kc = whole_units(std::max<std::size_t>(256, unit));
    while (b.kc > smallest_chunk && footprint(b) > capacity) b.kc = whole_units((b.kc + 1) / 2);
    if (b.kc < smallest_chunk) b.kc = smallest_chunk;
    return footprint(b) <= capacity;
  };
  // The chunk does not depend on the team (the footprint does not read it): found once per single-batch block size for
  // all three team scopes. 0: not found yet; kNoFit: does not fit.
  constexpr std::size_t kNoFit = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t>& chunks = tools.memos.chunks;
  chunks.assign(row_sizes.size() * column_sizes.size() * 2, 0);
  const auto fit_chunk_of = [&](Blocking& b, std::size_t mb_at, std::size_t nb_at) {
    if (b.batches > 1) return fit_chunk(b);
    std::size_t& kc = chunks[(mb_at * column_sizes.size() + nb_at) * 2 + (b.a_resident ? 1 : 0)];
    if (kc == 0) kc = fit_chunk(b) ? b.kc : kNoFit;
    b.kc = kc;
    return kc != kNoFit;
  };
  const bool share = can_share_a(job, best.whole_rows);
  for (const TeamScope team : {TeamScope::kNone, TeamScope::kRow, TeamScope::kGroup}) {
    const bool teams = team != TeamScope::kNone;
    if (teams && (best.whole_rows || team_members(arch, team) < 2)) continue;
    // A B source's tiles (conv's image) are many small reads with address work, all of it on a team's leader: one
    // leader per group did not keep up (ResNet-18's layer4 convs ran 2x slower), which the estimate does not see.
    if (team == TeamScope::kGroup && job.b_source != nullptr) continue;
    for (const std::size_t batches : std::array<std::size_t, 4>{1, 2, 4, 8}) {
      if (batches > 1 && (teams || !share || batches > job.a_batch.size())) break;
      for (std::size_t mb_at = 0; mb_at < row_sizes.size(); ++mb_at) {
        const std::size_t mb = row_sizes[mb_at];
        if ((batches > 1 || teams) && mb > job.m) break;
        const std::size_t members = team_members(arch, team);
        const std::size_t block_rows_of_mb =
            block_rows(job, Blocking{.mb = mb, .batches = batches, .team = team}, members);
        for (std::size_t nb_at = 0; nb_at < column_sizes.size(); ++nb_at) {
          const std::size_t nb = column_sizes[nb_at];
          std::optional<BlockGrid> grid;  // block_count's units, as estimator.grid(b) finds them
          for (const bool a_resident : {false, true}) {
            Blocking b{.mb = mb,
                       .nb = nb,
                       .batches = batches,
                       .whole_rows = best.whole_rows,
                       .team = team,
                       .a_resident = a_resident};
            if (a_resident && !a_rows_fixed(job, b, arch)) continue;
            if (!fit_chunk_of(b, mb_at, nb_at)) continue;
            if (!grid) grid = estimator.grid(members, block_rows_of_mb * ceil_div(job.n, nb));
            const bool prune = best_cycles >= 0 && tools.mode != BlockingSearch::kFull;
            const double cycles =
                estimator.cycles(b, *grid, prune ? best_cycles : std::numeric_limits<double>::infinity());
            if (best_cycles < 0 || cycles < best_cycles) best = b, best_cycles = cycles;
          }
        }
      }
    }
  }
  if (best_cycles < 0) {  // nothing fits at k chunks of 32: the smallest blocks, k chunks shrunk below
    best.batches = 1;
    best.team = TeamScope::kNone;
    best.a_resident = false;
    best.mb = best.whole_rows ? 2 : 1;
    best.nb = best.whole_rows ? job.n : std::min<std::size_t>(8, tiling::ceil_even(job.n));
    best.kc = whole_units(std::max<std::size_t>(256, unit));
    while (best.kc > unit && footprint(best) > capacity) best.kc = whole_units((best.kc + 1) / 2);
    best_cycles = estimator.cycles(best);
  }
  // Ranked with merged reads priced apart; the estimate reported prices them as issued.
  if (job.b_source != nullptr) {
    best_cycles =
        BlockingEstimator(arch, tools.price, tools.broadcast, tools.puts, tools.memos, job, MergedReads::kAsIssued)
            .cycles(best);
  }
  return {best, best_cycles};  // when even this does not fit, the allocations trap with the ldm numbers
}

/// Everything choose_blocking reads of a job, as integers: every field but the device addresses (the search
/// prices reads by their offsets from transaction-aligned buffers), and the B source's own description. Some
/// fields the search does not read (b_batch, alpha, beta, the pack inputs) are in too: that costs only hits.
std::vector<std::uint64_t> search_key(const MatrixMultiply& job) {
  const auto stored = [](std::vector<std::uint64_t>& key, const StoredMatrix& s) {
    describe(key, s.layout);
    key.insert(key.end(), {s.rows, s.cols, s.transposed ? 1U : 0U});
  };
  std::vector<std::uint64_t> key{job.m,
                                 job.n,
                                 job.k,
                                 std::bit_cast<std::uint32_t>(job.alpha),
                                 job.has_addend ? 1U : 0U,
                                 std::bit_cast<std::uint32_t>(job.c.beta),
                                 job.has_row_bias ? 1U : 0U,
                                 job.packs != nullptr ? 1U : 0U,
                                 job.packs != nullptr ? job.packs->max_bytes : 0U,
                                 job.pack_bias_input,
                                 job.pack_resident_input,
                                 job.a_batch.size(),
                                 job.b_batch.size()};
  key.insert(key.end(), job.a_batch.begin(), job.a_batch.end());
  key.insert(key.end(), job.b_batch.begin(), job.b_batch.end());
  stored(key, job.a);
  describe(key, job.yl);
  if (job.b_source != nullptr) {
    key.push_back(1);
    job.b_source->describe(key);
  } else {
    key.push_back(0);
    stored(key, job.b);
  }
  if (job.has_addend) stored(key, job.c.matrix);
  if (job.has_row_bias) stored(key, job.row_bias);
  key.insert(key.end(), {job.has_residual ? 1U : 0U, job.residual_first ? 1U : 0U});
  if (job.has_residual) stored(key, job.residual);
  job.activation.describe(key);
  return key;
}

/// What a machine's control core keeps of its searches for one arch: the read pricer (its memos) and the blocking
/// chosen per job description (search_key).
struct ArchSearches {
  explicit ArchSearches(const Arch& of)
      : arch(of),
        price(std::make_unique<tiling::ReadPricer>(of)),
        broadcast(std::make_unique<tiling::ReadPricer>(of, DmaMode::kBcast)) {}
  const Arch& arch;
  std::unique_ptr<tiling::ReadPricer> price, broadcast;
  std::map<std::vector<std::uint64_t>, ChosenBlocking> chosen;
  std::size_t words = 0;  // in the keys

  // Bounds for a long-lived machine (it starts afresh past them); a key grows with the job's batches.
  static constexpr std::size_t kMaxJobs = 4096, kMaxWords = std::size_t{1} << 20, kMaxKeyWords = std::size_t{1} << 14;

  /// Keeps `blocking` as the search's result for `key`, unless the key is too long to keep (a job of very many
  /// batches).
  void remember(const std::vector<std::uint64_t>& key, const ChosenBlocking& blocking) {
    if (key.size() > kMaxKeyWords) return;
    if (chosen.size() >= kMaxJobs || words + key.size() > kMaxWords) {
      chosen.clear();
      words = 0;
    }
    if (chosen.emplace(key, blocking).second) words += key.size();
  }
};

/// The machine's blocking searches (Machine::host_state): per arch, the put memo, the mode and the count.
struct BlockingSearches {
  mutable std::mutex mutex;  // held by each search: several core groups' controls may run at once
  PerArch<ArchSearches> arches;
  PutMemo puts;
  EstimatorMemos memos;  // one search's at a time (the mutex)
  BlockingSearch mode = BlockingSearch::kCached;
  std::uint64_t count = 0;
  /// Another thread's view of a table (KernelEstimates::for_another_thread): the table whose chosen blockings it
  /// looks up before searching and gives each result to; its own tables serve its searches. Null: a table of its own.
  BlockingSearches* shared = nullptr;

  /// Counts a view's searches here (its results are here already), once; both mutexes held.
  void absorb(BlockingSearches& view) {
    count += view.count;
    view.count = 0;
  }
};

/// The tools a search on `searches`' tables for `cache`'s arch uses, the tables started afresh past their bounds (a
/// long-lived machine); its mutex held.
SearchTools search_tools(BlockingSearches& searches, ArchSearches& cache) {
  constexpr std::size_t kMaxPuts = std::size_t{1} << 16;
  if (cache.price->memos_full()) cache.price = std::make_unique<tiling::ReadPricer>(cache.arch);
  if (cache.broadcast->memos_full())
    cache.broadcast = std::make_unique<tiling::ReadPricer>(cache.arch, DmaMode::kBcast);
  if (searches.puts.size() > kMaxPuts) searches.puts.clear();
  return {*cache.price, *cache.broadcast, searches.puts, searches.memos, searches.mode};
}

/// chosen_blocking for a view of `searches.shared` on another thread: the shared table is locked only to look the
/// job up and to keep the result; the search runs on the view's own tables.
ChosenBlocking chosen_blocking_shared(BlockingSearches& searches, const Arch& arch, const MatrixMultiply& job) {
  BlockingSearches& shared = *searches.shared;
  const std::vector<std::uint64_t> key = search_key(job);
  {
    const std::lock_guard lock(shared.mutex);
    const ArchSearches& cache = shared.arches.of(arch);
    if (const auto found = cache.chosen.find(key); found != cache.chosen.end()) return found->second;
  }
  ChosenBlocking chosen;
  {
    const std::lock_guard lock(searches.mutex);
    ArchSearches& own = searches.arches.of(arch);
    chosen = choose_blocking(own.arch, job, search_tools(searches, own));
    ++searches.count;
  }
  const std::lock_guard lock(shared.mutex);
  shared.arches.of(arch).remember(key, chosen);
  return chosen;
}

/// choose_blocking, once per job description and arch on a machine: a network's identical layers (ResNet-18 has
/// four sets of three or four) search once.
ChosenBlocking chosen_blocking(BlockingSearches& searches, const Arch& arch, const MatrixMultiply& job) {
  if (searches.shared != nullptr && searches.mode == BlockingSearch::kCached) {
    return chosen_blocking_shared(searches, arch, job);
  }
  const std::lock_guard lock(searches.mutex);
  ArchSearches& cache = searches.arches.of(arch);
  const SearchTools tools = search_tools(searches, cache);
  if (searches.mode != BlockingSearch::kCached) {
    ++searches.count;
    return choose_blocking(cache.arch, job, tools);
  }
  std::vector<std::uint64_t> key = search_key(job);
  if (const auto found = cache.chosen.find(key); found != cache.chosen.end()) return found->second;
  const ChosenBlocking chosen = choose_blocking(cache.arch, job, tools);
  ++searches.count;
  cache.remember(key, chosen);
  return chosen;
}

ChosenBlocking chosen_blocking(Machine& machine, const MatrixMultiply& job) {
  return chosen_blocking(machine.host_state<BlockingSearches>(), machine.arch(), job);
}

/// Products of fewer rows wait in the host thread's ProductQueue for those of the cores sharing their B tile.
constexpr std::size_t kQueuedRows = 4;

/// Host scratch for a chunk's float tiles, shared by the cores a host thread runs (Core::group_state; a chunk is
/// unpacked and multiplied without a fiber switch): a launch neither allocates nor clears a tile per simulated core.
struct ChunkScratch {
  enum Which { kA, kB };
  std::array<TileFloats, 2> tiles;
};

TileFloats& scratch_floats(Core& core, ChunkScratch::Which which, std::size_t elements) {
  ChunkScratch& scratch = core.group_state<ChunkScratch>();  // warm across launches
  TileFloats& tile = scratch.tiles[which];
  if (tile.size() < elements) tile.resize(elements);
  return tile;
}

/// The logical tile (rows x cols, row-major floats) from a completed read; `col0`: the tile's first column within
/// the read (a chunk of a resident panel, which is never transposed).
template <typename Floats>  // TileFloats for a product's operand, any vector of floats otherwise
void unpack_tile(const StoredMatrix& s, LdmSpan<const f16> buf, const tiling::BlockRead& read, std::size_t rows,
                 std::size_t cols, std::size_t pitch, Floats& out, std::size_t col0 = 0) {
  zero_padding(out.data(), rows, cols, pitch);
  if (!s.transposed) {
    for (std::size_t r = 0; r < rows; ++r) to_floats(buf, read.start(r) + col0, cols, out.data() + r * pitch);
    return;
  }
  // Stored transposed, the read holds a run per column: a block of columns' runs is converted, then written a row
  // at a time, so each row of `out` takes the block's values as one contiguous stretch (written a column at a time,
  // every value went to another row). The scratch is the host thread's: no fiber switch happens in here.
  constexpr std::size_t kBlockColumns = 16;
  thread_local std::vector<float> runs;
  if (runs.size() < kBlockColumns * rows) runs.resize(kBlockColumns * rows);
  for (std::size_t c0 = 0; c0 < cols; c0 += kBlockColumns) {
    const std::size_t n = std::min(kBlockColumns, cols - c0);
    for (std::size_t k = 0; k < n; ++k) to_floats(buf, read.start(c0 + k), rows, runs.data() + k * rows);
    for (std::size_t r = 0; r < rows; ++r) {
      float* row = out.data() + r * pitch + c0;
      for (std::size_t k = 0; k < n; ++k) row[k] = runs[k * rows + r];
    }
  }
}

/// One output block: rows [g0, g1) of the [batches * m, n] output, columns [j0, j1); or, when `batches` > 0,
/// rows [g0, g1) of each of the batches [b0, b0 + batches), which share their A tiles.
struct OutputBlock {
  std::size_t g0, g1, j0, j1;
  std::size_t b0 = 0, batches = 0;
};

/// Unpacked tiles of a stored B that a team's members received by one ROW or BCAST read (tile_memo.hpp): B is not
/// written while the kernel runs, so a member reuses the float tile a member on its host thread unpacked from the
/// same read instead of converting it again. The group's six teams' two buffers each fit.
struct StoredTiles : HostMemo<TileFloats, 16> {
  static StoredTiles& of(Core& core) { return core.group_state<StoredTiles>(); }
};

class BlockRunner {
 public:
  /// `b_memo`: an id unique to this launch when team members may reuse each other's unpacked B tiles, else 0.
  BlockRunner(Core& core, const MatrixMultiply& job, const Blocking& blocking, std::uint64_t b_memo = 0)
      : core_(core), job_(job), b_(blocking), model_(core.arch().compute), b_memo_(b_memo) {
    if (b_.a_resident) a_panel_ = core.ldm().alloc<f16>(tile_elements(job.a, b_.mb, job.k));
    for (auto& set : sets_) {
      if (!b_.a_resident) set.a = core.ldm().alloc<f16>(tile_elements(job.a, b_.mb, b_.kc));
      set.b.resize(b_.batches);
      set.b_read.resize(b_.batches);
      set.b_pending.resize(b_.batches);
      for (auto& buffer : set.b) buffer = core.ldm().alloc<f16>(b_tile_elements(job, b_.kc, b_.nb));
    }
    core.ldm().alloc<float>(b_.batches * b_.mb * b_.nb);  // the fp32 accumulators a core holds (host: acc_)
    const std::size_t out_cols = b_.whole_rows ? job.yl.chw_pitch : b_.nb + 2;
    out_ = core.ldm().alloc<f16>((b_.mb + padding_rows(job)) * out_cols);
    if (job.has_addend) addend_ = core.ldm().alloc<f16>(tiling::block_buffer_elements(b_.mb, b_.nb));
    if (job.has_residual) residual_ = core.ldm().alloc<f16>(tiling::block_buffer_elements(b_.mb, b_.nb));
    if (job.packs != nullptr) {
      read_pack();
    } else {
      if (job.has_row_bias) read_row_bias();
      if (job.b_source != nullptr && job.b_source->resident_elements() > 0) {
        resident_ = core.ldm().alloc<f16>(job.b_source->resident_elements());
        job.b_source->load_resident(core, resident_);
      }
    }
    acc_.resize(b_.batches * b_.mb * b_.nb);
  }
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;
  /// Products still queued into acc_ are dropped before it goes: only a fault ends a kernel between a product and
  /// the write that runs it, and nothing reads acc_ after that.
  ~BlockRunner() {
    if (queued_) ProductQueue::of(core_).discard_touching(acc_.data(), acc_.data() + acc_.size());
  }

  void run(const OutputBlock& block) {
    const std::size_t width = block.j1 - block.j0;
    settle_acc();
    std::fill(acc_.begin(), acc_.end(), 0.0f);
    if (block.batches > 0) {  // the same rows of several batches: one A tile per chunk for all of them
      const std::size_t rows = block.g1 - block.g0;
      std::vector<Lane> lanes;
      for (std::size_t t = 0; t < block.batches; ++t) lanes.push_back({block.b0 + t, acc_.data() + t * rows * width});
      multiply(lanes, block.g0, block.g1, block.j0, block.j1);
      for (std::size_t t = 0; t < block.batches; ++t) {
        const std::size_t g0 = (block.b0 + t) * job_.m + block.g0;
        write(g0, g0 + rows, block.j0, block.j1, lanes[t].acc);
      }
      return;
    }
    // Segments of the block's rows within one output batch.
    for (std::size_t g = block.g0; g < block.g1;) {
      const std::size_t batch = g / job_.m, i0 = g % job_.m;
      const std::size_t i1 = std::min(job_.m, i0 + (block.g1 - g));
      multiply({Lane{batch, acc_.data() + (g - block.g0) * width}}, i0, i1, block.j0, block.j1);
      g += i1 - i0;
    }
    write(block.g0, block.g1, block.j0, block.j1, acc_.data());
  }

  /// A team unit: this core's rows [i0, i1) (maybe none) of batch `batch`, columns [j0, j1), sharing B tiles
  /// with the rest of its team (`leader`: the team's first core).
  void run_team(std::size_t batch, std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1, bool leader) {
    const std::size_t width = j1 - j0;
    settle_acc();
    std::fill(acc_.begin(), acc_.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(i1 - i0, 1) * width),
              0.0f);
    const TeamRole role{leader, b_.team == TeamScope::kGroup};
    multiply({Lane{batch, acc_.data()}}, i0, i1, j0, j1, &role);
    if (i1 > i0) write(batch * job_.m + i0, batch * job_.m + i1, j0, j1, acc_.data());
  }

  void finish() {
    for (DmaHandle& h : puts_) h.wait();
    puts_.clear();
  }

 private:
  /// One batch multiplied with the shared A rows, and where its products accumulate.
  struct Lane {
    std::size_t batch;
    float* acc;
  };
  struct TileSet {
    LdmSpan<f16> a;
    std::vector<LdmSpan<f16>> b;
    tiling::BlockRead a_read;
    std::vector<tiling::BlockRead> b_read;
    std::vector<PendingTile> b_pending;
    std::size_t k0 = 0, k1 = 0;
  };

  /// Issues chunk k0's reads: A rows [i0, i1) (none when empty) and each lane's B tile as `b_mode` says.
  void issue(TileSet& set, const std::vector<Lane>& lanes, std::size_t i0, std::size_t i1, std::size_t j0,
             std::size_t j1, std::size_t k0, tiling::ReadMode b_mode = tiling::ReadMode::kPe) {
    set.k0 = k0;
    set.k1 = std::min(job_.k, k0 + b_.kc);
    set.a_read = {};
    const std::size_t a_index = job_.a_batch[lanes[0].batch];
    if (i1 > i0 && b_.a_resident) {
      if (k0 == 0) load_a_panel(a_index, i0, i1);
    } else if (i1 > i0) {
      set.a_read = tiling::get_block(core_, set.a, job_.a.base, job_.a.layout.total,
                                     tile_block(job_.a, a_index, i0, i1, set.k0, set.k1));
    }
    for (std::size_t t = 0; t < lanes.size(); ++t) {
      const std::size_t batch = job_.b_batch[lanes[t].batch];
      if (job_.b_source != nullptr) {
        PendingTile& pending = set.b_pending[t];
        pending.handles.clear();
        pending.starts.clear();
        job_.b_source->issue(core_, b_mode, set.b[t], resident_, batch, set.k0, set.k1, j0, j1, pending);
      } else {
        set.b_read[t] = tiling::get_block(core_, set.b[t], job_.b.base, job_.b.layout.total,
                                          tile_block(job_.b, batch, set.k0, set.k1, j0, j1), b_mode);
      }
    }
  }

  /// Reads A rows [i0, i1) of stored matrix `index` over the whole k into the resident panel, unless they are there.
  void load_a_panel(std::size_t index, std::size_t i0, std::size_t i1) {
    const std::array<std::size_t, 3> key{index, i0, i1};
    if (a_panel_loaded_ && key == a_panel_key_) return;
    a_panel_read_.wait();  // a read of other rows still landing in the panel
    a_panel_read_ = tiling::get_block(core_, a_panel_, job_.a.base, job_.a.layout.total,
                                      tile_block(job_.a, index, i0, i1, 0, job_.k));
    a_panel_key_ = key;
    a_panel_loaded_ = true;
  }

  /// Waits for a set's B reads (only the issuing core holds handles).
  void wait_b(TileSet& set, std::size_t lanes) {
    for (std::size_t t = 0; t < lanes; ++t) {
      set.b_read[t].wait();
      for (DmaHandle& h : set.b_pending[t].handles) h.wait();
    }
  }

  /// Unpacks chunk `set` and accumulates it into every lane (rows [i0, i1) of A).
  void compute_chunk(TileSet& set, const std::vector<Lane>& lanes, std::size_t rows, std::size_t j0, std::size_t j1) {
    const std::size_t depth = set.k1 - set.k0, width = j1 - j0, pitch = b_pitch_for(width);
    TileFloats& a_tile = scratch_floats(core_, ChunkScratch::kA, b_.mb * b_.kc);
    TileFloats& b_scratch = scratch_floats(core_, ChunkScratch::kB, b_.kc * b_pitch_for(b_.nb));
    if (b_.a_resident) {
      unpack_tile(job_.a, a_panel_, a_panel_read_, rows, depth, depth, a_tile, set.k0);
    } else {
      unpack_tile(job_.a, set.a, set.a_read, rows, depth, depth, a_tile);
    }
    ProductQueue& products = ProductQueue::of(core_);
    for (std::size_t t = 0; t < lanes.size(); ++t) {
      const float* b_tile = b_scratch.data();
      if (job_.b_source != nullptr) {
        b_tile = job_.b_source->unpack(core_, set.b[t], set.b_pending[t], job_.b_batch[lanes[t].batch], set.k0, set.k1,
                                       j0, j1, b_scratch);
      } else {
        b_tile = stored_b_tile(set, t, job_.b_batch[lanes[t].batch], depth, width, pitch, j0, j1, b_scratch);
      }
      float* acc = lanes[t].acc;
      // Only a few rows gain by waiting for the rest of the team (multiply_add's blocks are 4 rows high), and only a
      // memo's tile stays as it is until that memo's next insert.
      if (rows < kQueuedRows && b_tile != b_scratch.data()) {
        products.add(a_tile.data(), b_tile, acc, rows, width, depth, width, pitch);
        queued_ = true;
      } else {
        products.flush_touching(acc, acc + rows * width);
        multiply_add(a_tile.data(), b_tile, acc, rows, width, depth, width, pitch);
      }
      core_.compute(model_.matmul_tile(DataType::kF32, rows, width, depth, set.k0 > 0));
    }
  }

  /// Products queued into acc_ run (before acc_ is read, cleared or freed).
  void settle_acc() { ProductQueue::of(core_).flush_touching(acc_.data(), acc_.data() + acc_.size()); }

  /// Lane t's B tile of chunk `set` as floats: unpacked into `scratch`, or (b_memo_) found in or added to the
  /// host thread's StoredTiles.
  const float* stored_b_tile(TileSet& set, std::size_t t, std::size_t batch, std::size_t depth, std::size_t width,
                             std::size_t pitch, std::size_t j0, std::size_t j1, TileFloats& scratch) {
    if (b_memo_ == 0) {
      unpack_tile(job_.b, set.b[t], set.b_read[t], depth, width, pitch, scratch);
      return scratch.data();
    }
    StoredTiles& memo = StoredTiles::of(core_);
    memo.scratch_key().assign({b_memo_, batch, set.k0, set.k1, j0, j1});
    if (const TileFloats* found = memo.find()) return found->data();
    settle_before_insert(ProductQueue::of(core_), memo);
    TileFloats& tile = memo.insert();
    if (tile.size() < depth * pitch) tile.resize(depth * pitch);
    // A member reads the leader's read where it landed: its own copy is never made.
    unpack_tile(job_.b, core_.readable_ldm(set.b[t]), set.b_read[t], depth, width, pitch, tile);
    return tile.data();
  }

  /// A core's part in a team: the leader reads each B tile for every member, in ROW mode for a mesh row and in
  /// BCAST mode for a whole group.
  struct TeamRole {
    bool leader = false;
    bool group = false;
    Scope scope() const { return group ? Scope::kGroup : Scope::kRow; }
    /// `on_read`: the members read B only through stored_b_tile or their B source's unpack, which read it where the
    /// leader's get landed (Core::readable_ldm).
    tiling::ReadMode read_mode(bool on_read) const {
      if (!leader) return tiling::ReadMode::kPlan;
      if (on_read) return group ? tiling::ReadMode::kBcastOnRead : tiling::ReadMode::kRowOnRead;
      return group ? tiling::ReadMode::kBcast : tiling::ReadMode::kRow;
    }
  };

  /// acc of every lane += A rows [i0, i1) (none for a team member without rows) x B[lane] columns [j0, j1), over k
  /// in chunks, double-buffered: the next chunk's reads go out before this chunk is waited for and multiplied.
  /// In a team only the leader issues (and waits for) B; team barriers keep a B buffer from being refilled while a
  /// member still multiplies it, and tell members the chunk's B has landed.
  void multiply(const std::vector<Lane>& lanes, std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1,
                const TeamRole* team = nullptr) {
    const tiling::ReadMode b_mode =
        team == nullptr ? tiling::ReadMode::kPe : team->read_mode(job_.b_source != nullptr || b_memo_ != 0);
    if (team != nullptr) core_.barrier(team->scope());  // every member is done with the previous unit's buffers
    std::size_t current = 0;
    issue(sets_[current], lanes, i0, i1, j0, j1, 0, b_mode);
    for (std::size_t k0 = 0; k0 < job_.k; k0 += b_.kc) {
      TileSet& set = sets_[current];
      if (team != nullptr) {
        if (team->leader) wait_b(set, lanes.size());
        core_.barrier(team->scope());
      }
      if (k0 + b_.kc < job_.k) issue(sets_[current ^ 1], lanes, i0, i1, j0, j1, k0 + b_.kc, b_mode);
      if (i1 > i0) {
        set.a_read.wait();
        a_panel_read_.wait();
        if (team == nullptr) wait_b(set, lanes.size());
        compute_chunk(set, lanes, i1 - i0, j0, j1);
      }
      current ^= 1;
    }
  }

  /// Y = activation(alpha * acc (+ bias, + beta * C) (+ R after rounding)) for output rows [g0, g1) x columns
  /// [j0, j1), zeros in the padding the block owns; then put.
  void write(std::size_t g0, std::size_t g1, std::size_t j0, std::size_t j1, const float* acc) {
    finish();  // out_ is reused
    ProductQueue::of(core_).flush_touching(acc, acc + (g1 - g0) * (j1 - j0));
    const std::size_t width = j1 - j0, pitch = job_.yl.chw_pitch;
    const std::size_t stored_rows = job_.yl.total / pitch;
    const std::size_t g_end = g1 == job_.yl.shape.n ? stored_rows : g1;
    const std::size_t count = b_.whole_rows ? pitch : (j1 == job_.n && job_.y_owns_padding ? pitch : j1) - j0;
    std::vector<float>& values = values_;  // reused: a core writes a block per unit
    values.assign((g_end - g0) * count, 0.0f);
    const std::vector<float> addend = read_addend(g0, g1, j0, j1);
    const std::size_t c_rows = job_.c.matrix.rows, c_cols = job_.c.matrix.cols;
    const float alpha = job_.alpha;
    for (std::size_t g = g0; g < g1; ++g) {
      const std::size_t r = g - g0;
      const float* in = acc + r * width;
      float* out = values.data() + r * count;
      if (!job_.has_addend) {  // conv and matmul: loops without a test per element
        if (job_.has_row_bias) {
          const float bias = row_bias_[g % row_bias_.size()];
          for (std::size_t j = 0; j < width; ++j) out[j] = alpha * in[j] + bias;
        } else {
          for (std::size_t j = 0; j < width; ++j) out[j] = alpha * in[j];
        }
        continue;
      }
      if (job_.addend_rounded) {  // a folded bias add: the ops' bits
        const float* c = addend.data() + (c_rows == 1 ? 0 : r * (c_cols == 1 ? 1 : width));
        for (std::size_t j = 0; j < width; ++j) out[j] = alpha * in[j];
        round_to_fp16(out, width);
        for (std::size_t j = 0; j < width; ++j) {
          const float cv = c[c_cols == 1 ? 0 : j];
          out[j] = job_.addend_first ? add_value(cv, out[j]) : add_value(out[j], cv);
        }
        continue;
      }
      for (std::size_t j = 0; j < width; ++j) {
        float v = alpha * in[j];
        if (job_.has_row_bias) v += row_bias_[g % row_bias_.size()];
        const std::size_t cr = c_rows == 1 ? 0 : r, cc = c_cols == 1 ? 0 : j;
        v += job_.c.beta * addend[cr * (c_cols == 1 ? 1 : width) + cc];
        out[j] = v;
      }
    }
    if (job_.has_residual) add_residual(g0, g1, j0, j1, values.data(), count);
    if (job_.activation) {  // on the block's elements only: the padding stays zero
      for (std::size_t r = 0; r < g1 - g0; ++r) job_.activation.apply_before_rounding(values.data() + r * count, width);
    }
    const std::uint32_t terms =
        1u + (job_.has_addend ? 1u : 0u) + (job_.has_row_bias ? 1u : 0u) + (job_.has_residual ? 1u : 0u);
    core_.compute(model_.elementwise(DataType::kF32, (g1 - g0) * width, terms + job_.activation.ops(), terms, 1));
    to_halves(values.data(), values.size(), out_);
    puts_ = tiling::put_block(core_, job_.y, out_, {g0 * pitch + j0, pitch, g_end - g0, count});
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

  /// The row bias and b_source's resident data from this core's constant pack, fetched by one DMA: the resident
  /// data stays where the pack landed.
  void read_pack() {
    const LdmSpan<f16> buffer = packing::alloc_pack_buffer(core_, *job_.packs);
    const packing::PackFetch fetch = packing::fetch_pack(core_, *job_.packs, buffer);
    if (fetch.bytes == 0) throw packing::PackError("matrix multiply: this core has no constant pack");
    fetch.handle.wait();
    const packing::PackView pack = packing::PackView::parse(fetch.data(buffer));
    const auto entry = [&](std::uint32_t input, std::size_t count) {  // all `count` values of `input`
      const std::size_t i = pack.find(input);
      if (const packing::PackEntry& e = pack.entries()[i]; e.begin != 0 || e.count != count) {
        throw packing::PackError(fmt::format("matrix multiply: the pack holds values {}+{} of input {}, not all {}",
                                             e.begin, e.count, input, count));
      }
      return i;
    };
    if (job_.has_row_bias) {
      const auto values = pack.values(entry(job_.pack_bias_input, job_.row_bias.cols));
      row_bias_.resize(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) row_bias_[i] = static_cast<float>(values[i]);
      core_.ldm().alloc<float>(row_bias_.size());  // the fp32 copy kept beside the tiles
    }
    const std::size_t resident = job_.b_source != nullptr ? job_.b_source->resident_elements() : 0;
    if (resident > 0) {
      const packing::PackEntry& e = pack.entries()[entry(job_.pack_resident_input, resident)];
      resident_ = buffer.subspan(e.offset / sizeof(f16), resident);
    }
  }

  /// The addend's values for rows [g0, g1) x columns [j0, j1) ([rows or 1] x [width or 1]); gemm has one batch.
  /// values (rows `count` apart) = fp16(values) + R over output rows [g0, g1) x columns [j0, j1): the add op's
  /// arithmetic on the value the op would have stored.
  void add_residual(std::size_t g0, std::size_t g1, std::size_t j0, std::size_t j1, float* values, std::size_t count) {
    const std::size_t rows = g1 - g0, width = j1 - j0;
    std::vector<float>& skip = residual_values_;
    read_block(job_.residual, residual_, g0, g1, j0, j1, skip);
    for (std::size_t i = 0; i < rows; ++i) {
      float* v = values + i * count;
      const float* s = skip.data() + i * width;
      round_to_fp16(v, width);
      if (job_.residual_first) {
        for (std::size_t j = 0; j < width; ++j) v[j] = add_value(s[j], v[j]);
      } else {
        for (std::size_t j = 0; j < width; ++j) v[j] = add_value(v[j], s[j]);
      }
    }
  }

  std::vector<float> read_addend(std::size_t g0, std::size_t g1, std::size_t j0, std::size_t j1) {
    if (!job_.has_addend) return {};
    const StoredMatrix& c = job_.c.matrix;
    const std::size_t i0 = g0 % job_.m, rows = c.rows == 1 ? 1 : g1 - g0;
    const std::size_t r0 = c.rows == 1 ? 0 : i0, c0 = c.cols == 1 ? 0 : j0;
    const std::size_t cols = c.cols == 1 ? 1 : j1 - j0;
    std::vector<float> out;
    read_block(c, addend_, r0, r0 + rows, c0, c0 + cols, out);
    return out;
  }

  /// Rows [r0, r1) x columns [c0, c1) of stored matrix `s` read through `buf` and waited for, as floats in `out`.
  void read_block(const StoredMatrix& s, LdmSpan<f16> buf, std::size_t r0, std::size_t r1, std::size_t c0,
                  std::size_t c1, std::vector<float>& out) {
    tiling::BlockRead read = tiling::get_block(core_, buf, s.base, s.layout.total, tile_block(s, 0, r0, r1, c0, c1));
    read.wait();
    out.resize((r1 - r0) * (c1 - c0));
    unpack_tile(s, buf, read, r1 - r0, c1 - c0, c1 - c0, out);
  }

  Core& core_;
  const MatrixMultiply& job_;
  Blocking b_;
  const ComputeModel& model_;
  std::uint64_t b_memo_;
  std::array<TileSet, 2> sets_;
  LdmSpan<f16> out_, addend_, residual_, resident_, a_panel_;
  tiling::BlockRead a_panel_read_;
  std::array<std::size_t, 3> a_panel_key_{};  ///< stored A index and rows [i0, i1) in the panel
  bool a_panel_loaded_ = false;
  std::vector<float> acc_, row_bias_, values_, residual_values_;
  std::vector<DmaHandle> puts_;
  bool queued_ = false;  ///< a product of this runner went through the host thread's ProductQueue
};

/// The kernel: every core takes the blocks dealt to it.
void matrix_multiply_kernel(Core& core, const MatrixMultiply& job, const Blocking& blocking, std::uint64_t b_memo) {
  const std::size_t column_blocks = ceil_div(job.n, blocking.nb);
  if (blocking.team != TeamScope::kNone) {
    // Row teams: a mesh row of one group, team t = row * groups + group (groups interleaved), members by column.
    // Group teams: team t = group, members by core index in the group.
    const Arch& arch = core.arch();
    const bool group_team = blocking.team == TeamScope::kGroup;
    const std::size_t members = team_members(arch, blocking.team), teams = team_count(arch, blocking.team);
    const auto cg = static_cast<std::size_t>(core.cg()), row = static_cast<std::size_t>(core.row()),
               col = static_cast<std::size_t>(core.col());
    const std::size_t team = group_team ? cg : row * arch.core_groups + cg;
    const std::size_t member = group_team ? row * arch.cols + col : col;
    const std::size_t units = block_count(job, blocking, members), span = blocking.mb * members;
    if (team >= units) return;  // the whole team is idle
    BlockRunner runner(core, job, blocking, b_memo);
    for (std::size_t unit = team; unit < units; unit += teams) {
      const std::size_t cb = unit % column_blocks, j0 = cb * blocking.nb, j1 = std::min(job.n, j0 + blocking.nb);
      const std::size_t supers = ceil_div(job.m, span);
      const std::size_t super = (unit / column_blocks) % supers, batch = unit / column_blocks / supers;
      const std::size_t i0 = std::min(job.m, super * span + member * blocking.mb);
      runner.run_team(batch, i0, std::min(job.m, i0 + blocking.mb), j0, j1, member == 0);
    }
    runner.finish();
    return;
  }
  const std::size_t blocks = block_count(job, blocking);
  const std::size_t me = tiling::worker_index(core), workers = tiling::worker_count(core);
  if (me >= blocks) return;
  BlockRunner runner(core, job, blocking);
  for (std::size_t unit = me; unit < blocks; unit += workers) {
    const std::size_t cb = unit % column_blocks, j0 = cb * blocking.nb, j1 = std::min(job.n, j0 + blocking.nb);
    if (blocking.batches > 1) {  // unit = (batch group, row block within a batch, column block)
      const std::size_t row_blocks = ceil_div(job.m, blocking.mb);
      const std::size_t rb = (unit / column_blocks) % row_blocks, group = unit / column_blocks / row_blocks;
      const std::size_t b0 = group * blocking.batches;
      runner.run({rb * blocking.mb, std::min(job.m, (rb + 1) * blocking.mb), j0, j1, b0,
                  std::min(blocking.batches, job.a_batch.size() - b0)});
    } else {
      const std::size_t rb = unit / column_blocks;
      runner.run({rb * blocking.mb, std::min(job.yl.shape.n, (rb + 1) * blocking.mb), j0, j1});
    }
  }
  runner.finish();
}

}  // namespace

namespace {

/// The engine reads every operand as a row-major matrix of `rows` x `cols` per stored matrix (row pitch =
/// chw_pitch): a layout planned on another view would be read wrongly, so it is a bug in the calling op.
void require_matrix_layout(const Layout& l, std::size_t rows, std::size_t cols, std::string_view what) {
  if (l.shape.c != cols || l.hw_pitch != 1 || l.w_pitch != 1 || rows == 0 || l.shape.n % rows != 0) {
    throw std::logic_error(fmt::format("matrix multiply: {} is not in a [.. x {}, {}] matrix layout ({})", what, rows,
                                       cols, l.shape.str()));
  }
}

}  // namespace

std::uint64_t blocking_searches(const Machine& machine) {
  const BlockingSearches* searches = machine.find_host_state<BlockingSearches>();
  if (searches == nullptr) return 0;
  const std::lock_guard lock(searches->mutex);
  return searches->count;
}

void set_blocking_search(Machine& machine, BlockingSearch mode) {
  BlockingSearches& searches = machine.host_state<BlockingSearches>();
  const std::lock_guard lock(searches.mutex);
  searches.mode = mode;
}

nlohmann::json run_matrix_multiply(Machine& machine, const std::string& label, const MatrixMultiply& job) {
  require_matrix_layout(job.a.layout, job.a.rows, job.a.cols, "A");
  if (job.b_source == nullptr) require_matrix_layout(job.b.layout, job.b.rows, job.b.cols, "B");
  if (job.has_addend) require_matrix_layout(job.c.matrix.layout, job.c.matrix.rows, job.c.matrix.cols, "C");
  if (job.has_residual)
    require_matrix_layout(job.residual.layout, job.residual.rows, job.residual.cols, "the residual");
  require_matrix_layout(job.yl, job.a_batch.size() * job.m, job.n, "the output");
  // Chosen once on the control core (it depends only on the job and the arch), not by every core.
  const auto [blocking, estimated_cycles] = chosen_blocking(machine, job);
  // Team members may share unpacked B tiles on the host when the kernel cannot write B.
  const auto bytes = [](DeviceAddr at, const Layout& l) { return std::pair{at, at + l.total * sizeof(f16)}; };
  const auto [b0, b1] = bytes(job.b.base.addr(), job.b.layout);
  const auto [y0, y1] = bytes(job.y.addr(), job.yl);
  const bool b_fixed = job.b_source == nullptr && (y1 <= b0 || b1 <= y0);
  const std::uint64_t b_memo =
      blocking.team != TeamScope::kNone && b_fixed ? TileMemo::next_source_id() : std::uint64_t{0};
  machine.launch(LaunchSpec{.name = label}, matrix_multiply_kernel, job, blocking, b_memo).join();
  const char* dealt = blocking.team == TeamScope::kGroup ? "group teams"
                      : blocking.team == TeamScope::kRow ? "row teams"
                      : blocking.batches > 1             ? "shared-A batches"
                                                         : "blocks";
  return {{"block_rows", blocking.mb},
          {"block_columns", blocking.nb},
          {"k_chunk", blocking.kc},
          {"batches_per_block", blocking.batches},
          {"a_resident", blocking.a_resident},
          {"dealt_as", dealt},
          {"blocks", block_count(job, blocking, team_members(machine.arch(), blocking.team))},
          {"estimated_cycles", std::llround(estimated_cycles)}};
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

namespace ldmsim {

/// A planner's searches (KernelEstimates): the state a machine keeps of its own, without a machine.
struct KernelEstimates::Impl {
  std::unique_ptr<ops::BlockingSearches> owned;  ///< null when the searches are a machine's
  ops::BlockingSearches& searches;
};

KernelEstimates::KernelEstimates() {
  auto owned = std::make_unique<ops::BlockingSearches>();
  ops::BlockingSearches& searches = *owned;
  impl_ = std::make_unique<Impl>(Impl{std::move(owned), searches});
}
KernelEstimates::KernelEstimates(Machine& machine)
    : impl_(std::make_unique<Impl>(Impl{nullptr, machine.host_state<ops::BlockingSearches>()})) {}
KernelEstimates::~KernelEstimates() = default;
std::uint64_t KernelEstimates::searches() const {
  const std::lock_guard lock(impl_->searches.mutex);
  return impl_->searches.count;
}

std::unique_ptr<KernelEstimates> KernelEstimates::for_another_thread() {
  auto other = std::make_unique<KernelEstimates>();
  const std::lock_guard lock(impl_->searches.mutex);
  other->impl_->searches.mode = impl_->searches.mode;
  other->impl_->searches.shared = &impl_->searches;
  return other;
}

void KernelEstimates::absorb(KernelEstimates& view) {
  if (view.impl_->searches.shared != &impl_->searches) return;  // not a view of these: nothing of it is here
  const std::scoped_lock lock(impl_->searches.mutex, view.impl_->searches.mutex);
  impl_->searches.absorb(view.impl_->searches);
}

}  // namespace ldmsim

namespace ldmsim::ops {

bool matrix_multiply_fits(const Arch& arch, const MatrixMultiply& job) {
  TileSizeMemo b_tiles;
  const LdmFootprint footprint(job, arch.dma.transaction_bytes, b_tiles);
  Blocking smallest;  // as choose_blocking's last resort
  smallest.whole_rows = job.yl.chw_pitch % 2 != 0;
  smallest.mb = smallest.whole_rows ? 2 : 1;
  smallest.nb = smallest.whole_rows ? job.n : std::min<std::size_t>(8, tiling::ceil_even(job.n));
  smallest.kc = std::min(job.k, job.b_source != nullptr ? std::max<std::size_t>(1, job.b_source->chunk_unit()) : 1);
  // Within the slack it may still fit, as its launch finds out: only a blocking beyond it certainly does not.
  return footprint(smallest) <= arch.ldm_bytes + LdmFootprint::kSlackBytes;
}

double estimated_matrix_multiply(KernelEstimates& memo, const Arch& arch, const MatrixMultiply& job) {
  return chosen_blocking(memo.impl().searches, arch, job).estimated_cycles;
}

}  // namespace ldmsim::ops
