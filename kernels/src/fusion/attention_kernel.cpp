// The attention kernel's device code: a core group takes its items (a batch, or a part of one's query rows), its
// first core reads the batch's Kt and V (and the item's Q rows, when ldm holds them) for every core of the group at
// once (BCAST), and each core runs the fused program over its query rows, tile by tile, with the scores made from Q
// in ldm (supply) and the probabilities multiplied by V in ldm (consume).
#include <array>
#include <optional>

#include "../ops/tile_math.hpp"
#include "../ops/tile_memo.hpp"
#include "attention_impl.hpp"
#include "fused_core.hpp"
#include "ldmsim/kernels/matrix_block.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::fusion {

std::uint64_t attention_buffer_bytes(const AttentionShape& s, std::uint64_t tile_rows, std::uint64_t batches,
                                     std::uint64_t q_rows) {
  const std::uint64_t q = q_rows > 0 ? batches * q_rows * s.d : tile_rows * s.d;
  const std::uint64_t halves = batches * (s.d * s.t + s.t * s.e) + q + tile_rows * s.e + 10;
  return halves * sizeof(f16) + (3 * batches + 3) * Ldm::kDefaultAlignment;
}

std::vector<bool> per_batch_inputs(const FusedProgram& program, std::size_t score_input) {
  const FusionFrame& f = program.frame;
  std::vector<bool> per_batch(program.inputs.size(), false);
  if (f.k_begin == 0) return per_batch;
  for (std::size_t k = 0; k < program.inputs.size(); ++k) {
    const FusedValue& v = program.values[program.inputs[k]];
    per_batch[k] = k != score_input && v.rows(f) > 1 && v.dims[f.k_begin - 1] == 1;
  }
  return per_batch;
}

std::uint64_t per_batch_bytes(const FusedProgram& program, const std::vector<bool>& per_batch, std::uint64_t batches) {
  std::uint64_t bytes = 0;
  for (std::size_t k = 0; k < per_batch.size(); ++k) {
    if (per_batch[k]) {
      bytes +=
          (program.values[program.inputs[k]].row_elements(program.frame) + 4) * sizeof(f16) + Ldm::kDefaultAlignment;
    }
  }
  return bytes * batches;
}

namespace {

class AttentionCore final : public FusedCore {
 public:
  AttentionCore(Core& core, const AttentionArgs& a)
      : FusedCore(core, a.program), at_(a), score_(p_.inputs[a.score_input]), probs_(p_.outputs[0]) {}

  void run_attention() {
    const AttentionShape& s = at_.shape;
    const std::uint64_t groups = core_.arch().core_groups, items = s.batches * at_.parts;
    const auto me = static_cast<std::uint64_t>(core_.id()), cores = static_cast<std::uint64_t>(core_.group_size());
    // The same allocations in the same order on every core: Kt and V land at the same ldm address everywhere, as
    // the BCAST read needs. Q's buffer first: the first tile's read goes out before anything else.
    auto& ldm = core_.ldm();
    if (!at_.q_broadcast) q_ = ldm.alloc<f16>(m_.tile_rows * s.d + 4);
    y_ = ldm.alloc<f16>(m_.tile_rows * s.e + 4);
    if (at_.scale != QueryScale::kNone) scale_word_ = ldm.alloc<f16>(2);
    const auto first_tile = [&](std::uint64_t item) {
      const Range part = row_share(s.s, at_.parts, item % at_.parts, false);
      const Range mine = row_share(part.size(), cores, me, false);
      const std::uint64_t first = item / at_.parts * s.s + part.begin;
      return Range{first + mine.begin, first + std::min<std::uint64_t>(mine.end, mine.begin + m_.tile_rows)};
    };
    const auto cg = static_cast<std::uint64_t>(core_.cg());
    if (!at_.q_broadcast && cg < items && !first_tile(cg).empty()) prepare(first_tile(cg));
    const std::uint64_t part_rows = (s.s + at_.parts - 1) / at_.parts;  // the largest part
    for (std::size_t b = 0; b < (at_.prefetch ? 2u : 1u); ++b) {
      kt_[b] = ldm.alloc<f16>(s.d * s.t);
      v_[b] = ldm.alloc<f16>(s.t * s.e);
      if (at_.q_broadcast) q_block_[b] = ldm.alloc<f16>(part_rows * s.d);
      per_batch_[b].resize(p_.inputs.size());
      for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
        if ((*at_.per_batch)[k]) per_batch_[b][k] = ldm.alloc<f16>(p_.values[p_.inputs[k]].row_elements(f_) + 4);
      }
    }
    group_reads_ = true;                  // every core of the group allocates here
    allocate(m_.tile_rows, {0, f_.k()});  // issues the resident inputs' group reads
    plan_gathered_puts(cores);            // last: the teams' buffers take what ldm has left
    for (LdmSpan<f16>& slot : gather_) {
      if (team_ > 1) slot = ldm.alloc<f16>(team_rows_ * s.e + 4);
    }
    // The group's first item (and the next, read ahead) go out before anyone waits, behind the resident reads.
    if (me == 0 && cg < items) {
      // Q's scale (one element of a word-padded scalar) for every core: one request for the group, first.
      if (at_.scale != QueryScale::kNone) reads_[0].push_back(core_.bcast_get(scale_word_, at_.scalar));
      read_item(cg, 0);
      if (at_.prefetch && cg + groups < items) read_item(cg + groups, 1);
    }
    finish_group_reads();
    // A group's items are of different batches (parts <= groups), so each item loads its batch.
    for (std::uint64_t item = cg; item < items; item += groups) {
      batch_ = item / at_.parts;
      item_ = item;
      // A team's buffer is written again two items after its put: the put has read it before the cores start.
      if (team_ > 1 && me % team_ == 0) wait_gathered((loads_ + 1) % 2);  // load_item counts this item
      // The item's first Q rows are read before the group waits for its batch (they do not depend on it).
      if (!at_.q_broadcast && item != cg && !first_tile(item).empty()) prepare(first_tile(item));
      load_item(me, item, item + groups < items ? item + groups : items);
      const Range part = row_share(s.s, at_.parts, item % at_.parts, false);
      const Range mine = row_share(part.size(), cores, me, false);
      const std::uint64_t first = batch_ * s.s + part.begin;
      item_first_row_ = first;
      for (std::uint64_t at = mine.begin; at < mine.end; at += m_.tile_rows) {
        run_tile({first + at, first + std::min<std::uint64_t>(mine.end, at + m_.tile_rows)});
      }
      await_v(me);  // a core without rows passes the group's barrier too
      if (team_ > 1) put_gathered(me, item, cores);
    }
    finish();
    wait_y();
    for (std::size_t slot = 0; slot < 2; ++slot) wait_gathered(slot);
  }

 protected:
  bool supplied(std::size_t input) const override { return input == at_.score_input || (*at_.per_batch)[input]; }
  bool consumed(std::size_t output) const override { return output == 0; }

  /// Reads the tile's Q rows while the program's inputs are read (unless the group's read brought them).
  void prepare(Range rows) override {
    if (at_.q_broadcast) return;
    if (q_rows_.begin == rows.begin && q_rows_.end == rows.end) return;  // read ahead of its batch
    const AttentionShape& s = at_.shape;
    q_read_.clear();
    read_rows(q_read_, tiling::ReadMode::kPe, q_.first(rows.size() * s.d), at_.q, at_.views.q, rows.begin / s.s,
              rows.begin % s.s, rows.size(), s.d, 1);
    q_rows_ = rows;
  }

  /// scores = Q rows x Kt, rounded to fp16 as a stored product would be.
  void supply(Range rows) override {
    const AttentionShape& s = at_.shape;
    const std::uint64_t n = rows.size();
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
      if (!(*at_.per_batch)[k]) continue;
      const std::size_t v = p_.inputs[k];
      const std::uint64_t count = p_.values[v].row_elements(f_), first = batch_row(k, batch_) % 2;
      for (std::uint64_t r = rows.begin; r < rows.end; ++r) {
        ops::to_floats(per_batch_[slot_][k], first, count, row_ptr(v, r, r - rows.begin));
      }
    }
    q_floats_.resize(n * s.d);
    if (at_.q_broadcast) {
      const std::uint64_t at = (rows.begin - item_first_row_) * s.d;
      // A core reads its own rows of the group's read, where they landed.
      ops::to_floats(core_.readable_ldm(q_block_[slot_].subspan(at, n * s.d)), 0, n * s.d, q_floats_.data());
    } else {
      for (DmaHandle& h : q_read_) h.wait();
      q_rows_ = {};
      ops::to_floats(q_, 0, n * s.d, q_floats_.data());
    }
    if (at_.scale != QueryScale::kNone) {  // the scaling op's arithmetic and rounding
      const bool divide = at_.scale == QueryScale::kDivide;
      for (float& x : q_floats_) x = divide ? x / scale_ : x * scale_;
      round_to_half(q_floats_.data(), q_floats_.size());
      core_.compute({.flops = n * s.d});
    }
    float* scores = row_ptr(score_, rows.begin, 0);  // the tile's rows, t floats apart
    std::fill_n(scores, n * s.t, 0.0f);
    ops::multiply_add(q_floats_.data(), unpacked(0), scores, n, s.t, s.d, s.t, ops::b_pitch_for(s.t));
    round_to_half(scores, n * s.t);
    core_.compute(core_.arch().compute.matmul_tile(DataType::kF32, n, s.t, s.d, false));
  }

  /// Y rows = probabilities (rounded to fp16) x V, put as fp16.
  void consume(Range rows) override {
    const AttentionShape& s = at_.shape;
    const std::uint64_t n = rows.size();
    await_v(static_cast<std::uint64_t>(core_.id()));
    float* probs = row_ptr(probs_, rows.begin, 0);
    round_to_half(probs, n * s.t);
    y_floats_.assign(n * s.e, 0.0f);
    ops::multiply_add(probs, unpacked(1), y_floats_.data(), n, s.e, s.t, s.e, ops::b_pitch_for(s.e));
    core_.compute(core_.arch().compute.matmul_tile(DataType::kF32, n, s.e, s.t, false));
    if (team_ > 1) {
      gather_rows(rows, n);
      return;
    }
    wait_y();
    ops::to_halves(y_floats_.data(), n * s.e, y_);
    put_rows(rows, n);
  }

 private:
  /// Every core of the group passes both barriers: the first keeps the buffers until the last core is done with the
  /// previous item, the second holds every core until the group's read has landed. With two buffers the first core
  /// then reads the group's `next` item into the other one (free: every core is past the previous item); `next` is
  /// the item count when there is none. The first load also waits for Q's scale (run_attention reads it).
  void load_item(std::uint64_t me, std::uint64_t item, std::uint64_t next) {
    const std::uint64_t items = at_.shape.batches * at_.parts;
    const bool first = loads_ == 0;
    if (!first) core_.barrier();  // every core of the group makes the same loads
    if (at_.prefetch && !first) slot_ ^= 1;
    ++loads_;
    v_ready_ = false;
    if (me == 0) {
      read_item(item, slot_);
      // The next item's reads queue behind this one's before core 0 waits, so the engine never idles between them.
      if (at_.prefetch && next < items) read_item(next, slot_ ^ 1);
      for (DmaHandle& h : reads_[slot_]) h.wait();
      reads_[slot_].clear();
    }
    core_.barrier();
    if (first && at_.scale != QueryScale::kNone) scale_ = static_cast<float>(scale_word_.data()[0]);
  }

  /// The item's V, read last (the scores and softmax need only Kt and Q): every core of the group passes this
  /// barrier once per item, before its first product with V, or after its tiles when it has none.
  void await_v(std::uint64_t me) {
    if (v_ready_ || !v_apart_) return;
    v_ready_ = true;
    if (me == 0) {
      for (DmaHandle& h : v_reads_[slot_]) h.wait();
      v_reads_[slot_].clear();
    }
    core_.barrier();
  }

  /// Reads the item's batch's Kt and V (and the item's Q rows, q_broadcast) into buffer `slot` of every core of the
  /// group, each cut into whole-row parts as tiling::piece_count says (one request is served by one channel, at its
  /// share of the bandwidth), unless that slot's reads already bring that item.
  void read_item(std::uint64_t item, std::size_t slot) {
    if (slot_item_[slot] == item) return;
    slot_item_[slot] = item;
    std::vector<DmaHandle>& into = reads_[slot];
    const AttentionShape& s = at_.shape;
    const std::uint64_t b = item / at_.parts;
    const auto parts = [&](std::uint64_t elements) { return tiling::piece_count(core_, elements * sizeof(f16)); };
    // Kt, V and the Q block are read only through Core::readable_ldm (unpacked(), supply()): the host copies on
    // read.
    const auto on_read = tiling::ReadMode::kBcastOnRead;
    const AttentionViews& v = at_.views;
    // In the order the cores use them: Kt and Q (and the per-batch inputs) for the scores and softmax, then V, which
    // the group waits for separately (await_v), so the scores are made while V is on its way (v_apart_; else V
    // comes with Kt).
    if (v.k_rows) {
      read_rows(into, on_read, kt_[slot], at_.kt, v.kt, b, 0, s.t, s.d, parts(s.t * s.d));
    } else {
      read_rows(into, on_read, kt_[slot], at_.kt, v.kt, b, 0, s.d, s.t, parts(s.d * s.t));
    }
    if (!v_apart_) read_rows(into, on_read, v_[slot], at_.v, v.v, b, 0, s.t, s.e, parts(s.t * s.e));
    if (at_.q_broadcast) {
      const Range part = row_share(s.s, at_.parts, item % at_.parts, false);
      read_rows(into, on_read, q_block_[slot], at_.q, v.q, b, part.begin, part.size(), s.d, parts(part.size() * s.d));
    }
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
      if (!(*at_.per_batch)[k]) continue;
      // The op refuses a layout padded inside (AttentionOp::run): logical elements are at their offsets.
      const std::uint64_t count = p_.values[p_.inputs[k]].row_elements(f_), first = batch_row(k, b);
      into.push_back(tiling::get_range_as(core_, tiling::ReadMode::kBcast, per_batch_[slot][k], a_.in[k],
                                          a_.in_layout[k].total, {first, first + count})
                         .handle);
    }
    if (v_apart_) read_rows(v_reads_[slot], on_read, v_[slot], at_.v, v.v, b, 0, s.t, s.e, parts(s.t * s.e));
  }

  /// Issues the reads of rows [row, row + rows) of batch b's matrix of `cols` elements per row, placed in `base` by
  /// `at`, into `to` (packed), in `parts` requests of whole rows (as many elements each when the rows are packed).
  /// A strided request carries the gaps between rows when the engine's fields hold them, else each row is one.
  void read_rows(std::vector<DmaHandle>& into, tiling::ReadMode mode, LdmSpan<f16> to, DevicePtr<const f16> base,
                 const MatrixPlacement& at, std::uint64_t b, std::uint64_t row, std::uint64_t rows, std::uint64_t cols,
                 std::size_t parts) {
    const DevicePtr<const f16> first = base + at.offset + b * at.batch + row * at.pitch;
    if (at.pitch == cols || rows == 1) {
      const std::uint64_t n = rows * cols;
      for (std::size_t k = 0; k < parts; ++k) {
        const Range r = tiling::split_even(n, parts, k);
        if (r.empty()) continue;
        const LdmSpan<f16> piece = to.subspan(r.begin, r.size());
        into.push_back(mode == tiling::ReadMode::kPe ? core_.get(piece, first + r.begin)
                                                     : tiling::get_as(core_, mode, piece, first + r.begin));
      }
      return;
    }
    const std::size_t run = cols * sizeof(f16), gap = (at.pitch - cols) * sizeof(f16);
    for (std::size_t k = 0; k < parts; ++k) {
      const Range r = tiling::split_even(rows, parts, k);
      if (r.empty()) continue;
      const LdmSpan<f16> piece = to.subspan(r.begin * cols, r.size() * cols);
      if (tiling::fits_fields(core_, piece.size_bytes(), run, gap)) {
        into.push_back(tiling::get_as(core_, mode, piece, first + r.begin * at.pitch, run, gap));
        continue;
      }
      for (std::uint64_t i = r.begin; i < r.end; ++i) {
        into.push_back(tiling::get_as(core_, mode, to.subspan(i * cols, cols), first + i * at.pitch));
      }
    }
  }

  /// Puts the tile's n rows of Y (in y_) where the views place them: one request, strided when rows are apart.
  void put_rows(Range rows, std::uint64_t n) {
    const AttentionShape& s = at_.shape;
    const MatrixPlacement& at = at_.views.y;
    const DevicePtr<f16> first = at_.y + at.offset + rows.begin / s.s * at.batch + rows.begin % s.s * at.pitch;
    const LdmSpan<const f16> src(y_.first(n * s.e));
    if (at.pitch == s.e || n == 1) {
      pending_y_.push_back(core_.put(first, src));
      return;
    }
    const std::size_t run = s.e * sizeof(f16), gap = (at.pitch - s.e) * sizeof(f16);
    if (tiling::fits_fields(core_, src.size_bytes(), run, gap)) {
      pending_y_.push_back(core_.put_strided(first, src, run, gap));
      return;
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      pending_y_.push_back(core_.put(first + i * at.pitch, LdmSpan<const f16>(y_.subspan(i * s.e, s.e))));
    }
  }

  /// Whether the Y rows of a team of cores (a mesh row, or a pair where Y is in another group's memory) go out as one
  /// put by its first core, the others sending theirs to it by RMA: a core's rows of an item are one small tile (a
  /// query row or two, mostly the put's overhead on the engine), and the arch has RMA, whose engine is apart from
  /// the DMA channels. A team's rows are consecutive rows of the item, so their Y is one request (strided where Y's
  /// rows are apart).
  void plan_gathered_puts(std::uint64_t cores) {
    const Arch& arch = core_.arch();
    const AttentionShape& s = at_.shape;
    const std::uint64_t part_rows = (s.s + at_.parts - 1) / at_.parts;
    const std::uint64_t per_core = (part_rows + cores - 1) / cores;
    team_ = 1;
    // Y in another group's memory: each request's bytes cross the group's link after the engine has served it, one
    // request after another, so pairs of cores (half a KiB) keep the link busy sooner than a mesh row's 2 KiB
    // (the BERT-base heads on groups 1-5: 13,567 cycles in pairs, 14,438 by mesh rows, 14,990 each core alone).
    const bool remote = MainMemory::window_of(at_.y.addr(), arch.main_memory_bytes_per_cg) !=
                        static_cast<std::uint64_t>(core_.node_cg());
    const std::uint64_t team = remote ? kRemoteTeam : arch.cols;
    // Every core with rows (a team of a few rows saves little against the barrier: a GPT block's 16 tokens).
    if (!arch.rma.available || part_rows < cores || per_core > m_.tile_rows || team < 2 || cores % team != 0) return;
    if (per_core * s.e * sizeof(f16) > kGatherTileBytes) return;
    const std::uint64_t rows = per_core * team;
    const Ldm& ldm = core_.ldm();
    if (2 * ((rows * s.e + 4) * sizeof(f16) + Ldm::kDefaultAlignment) > ldm.capacity() - ldm.used()) return;
    const MatrixPlacement& y = at_.views.y;
    if (y.pitch != s.e &&
        !tiling::fits_fields(core_, rows * s.e * sizeof(f16), s.e * sizeof(f16), (y.pitch - s.e) * sizeof(f16))) {
      return;
    }
    team_ = team;
    team_rows_ = rows;
  }

  /// The item's rows of core `c` (within the batch).
  Range item_rows(std::uint64_t item, std::uint64_t c, std::uint64_t cores) const {
    const Range part = row_share(at_.shape.s, at_.parts, item % at_.parts, false);
    const Range mine = row_share(part.size(), cores, c, false);
    return {part.begin + mine.begin, part.begin + mine.end};
  }

  /// This core's n rows of Y into its team leader's buffer for this item: its own ldm for the leader, by RMA for
  /// the others (waited for: the team's put follows the group's barrier).
  void gather_rows(Range rows, std::uint64_t n) {
    const AttentionShape& s = at_.shape;
    const auto me = static_cast<std::uint64_t>(core_.id()), cores = static_cast<std::uint64_t>(core_.group_size());
    const std::uint64_t leader = me / team_ * team_;
    const std::uint64_t at = (rows.begin % s.s - item_rows(item_, leader, cores).begin) * s.e;
    const LdmSpan<f16> slot = gather_[loads_ % 2];
    if (me == leader) {
      ops::to_halves(y_floats_.data(), n * s.e, slot.subspan(at, n * s.e));
      return;
    }
    ops::to_halves(y_floats_.data(), n * s.e, y_);
    core_.wait_until(core_.rma(RmaRequest{.peer = static_cast<int>(leader),
                                          .local = y_.ldm_addr(),
                                          .remote = slot.subspan(at, n * s.e).ldm_addr(),
                                          .bytes = n * s.e * sizeof(f16),
                                          .api = "attention kernel"}));
  }

  /// After the item's tiles: the group's barrier (every team's RMA has landed), then each leader puts its team's
  /// rows.
  void put_gathered(std::uint64_t me, std::uint64_t item, std::uint64_t cores) {
    core_.barrier();
    if (me % team_ != 0) return;
    const std::uint64_t last = std::min<std::uint64_t>(me + team_, cores) - 1;
    const Range first = item_rows(item, me, cores), end = item_rows(item, last, cores);
    if (end.end <= first.begin) return;
    const AttentionShape& s = at_.shape;
    const MatrixPlacement& at = at_.views.y;
    const std::uint64_t rows = end.end - first.begin;
    const DevicePtr<f16> to = at_.y + at.offset + batch_ * at.batch + first.begin * at.pitch;
    const LdmSpan<const f16> src(gather_[loads_ % 2].first(rows * s.e));
    std::optional<DmaHandle>& pending = gathered_[loads_ % 2];
    if (at.pitch == s.e || rows == 1) {
      pending = core_.put(to, src);
    } else {
      pending = core_.put_strided(to, src, s.e * sizeof(f16), (at.pitch - s.e) * sizeof(f16));
    }
  }

  void wait_gathered(std::size_t slot) {
    if (gathered_[slot]) gathered_[slot]->wait();
    gathered_[slot].reset();
  }

  void wait_y() {
    for (DmaHandle& h : pending_y_) h.wait();
    pending_y_.clear();
  }

  /// The first logical element of batch b's row of per-batch input k.
  std::uint64_t batch_row(std::size_t k, std::uint64_t b) const {
    const std::size_t v = p_.inputs[k];
    return index_[v](b * at_.shape.s) * p_.values[v].row_elements(f_);
  }

  /// The batch's Kt (which 0) or V (1) as floats, rows padded to b_pitch_for. Every core of the group holds the
  /// same values, so the host unpacks them once per thread (TileMemo) and every core is still charged its work. The
  /// pointer is used before the fiber can switch.
  const float* unpacked(std::uint64_t which) {
    const AttentionShape& s = at_.shape;
    const std::uint64_t rows = which == 0 ? s.d : s.t, cols = which == 0 ? s.t : s.e;
    const std::size_t pitch = ops::b_pitch_for(cols);
    ops::TileMemo& memo = ops::TileMemo::of(core_);
    memo.scratch_key().assign({at_.memo_source, batch_, which});
    if (const ops::TileFloats* found = memo.find()) return found->data();
    ops::TileFloats& tile = memo.insert(ops::ProductQueue::of(core_), rows * pitch);
    const LdmSpan<const f16> from = core_.readable_ldm(which == 0 ? kt_[slot_] : v_[slot_]);  // the group's read
    if (which == 0 && at_.views.k_rows) {  // ldm holds K [t, d]: Kt's column j is K's row j
      k_row_.resize(s.d);
      for (std::uint64_t j = 0; j < s.t; ++j) {
        ops::to_floats(from, j * s.d, s.d, k_row_.data());
        for (std::uint64_t r = 0; r < s.d; ++r) tile[r * pitch + j] = k_row_[r];
      }
    } else {
      for (std::uint64_t r = 0; r < rows; ++r) ops::to_floats(from, r * cols, cols, tile.data() + r * pitch);
    }
    ops::zero_padding(tile.data(), rows, cols, pitch);
    return tile.data();
  }

  void round_to_half(float* values, std::uint64_t n) {
    halves_.resize(n);
    floats_to_halves(std::span<const float>(values, n), halves_);
    halves_to_floats(halves_, std::span<float>(values, n));
  }

  const AttentionArgs& at_;
  std::size_t score_, probs_;           // value ids
  std::uint64_t batch_ = 0, item_ = 0;  // the item in hand and its batch
  float scale_ = 1.0f;                  // Q's (at_.scale)
  std::array<LdmSpan<f16>, 2> kt_, v_;  // one batch's, or two (prefetch)
  std::size_t slot_ = 0;                // the buffer of the batch in use
  std::uint64_t loads_ = 0;
  // Core 0, per slot: the item its reads bring (none yet: all ones) and those reads until waited for.
  std::array<std::uint64_t, 2> slot_item_{~std::uint64_t{0}, ~std::uint64_t{0}};
  std::array<std::vector<DmaHandle>, 2> reads_, v_reads_;  // v_reads_: V's, waited for apart (await_v)
  // Gathered puts (plan_gathered_puts): cores per team (1: each core puts its own rows), the largest team's rows,
  // and per item parity the leader's buffer and its put.
  static constexpr std::uint64_t kGatherTileBytes = 1024, kRemoteTeam = 2;
  std::uint64_t team_ = 1, team_rows_ = 0;
  std::array<LdmSpan<f16>, 2> gather_;
  std::array<std::optional<DmaHandle>, 2> gathered_;
  bool v_ready_ = false;  // the item's V has landed (await_v passed)
  // V waited for apart: only when its read is long against the barrier that costs (a small window's V lands
  // with the rest: Swin-T's 49 x 32 heads ran slower apart).
  static constexpr std::uint64_t kVApartBytes = 8192;
  const bool v_apart_ = at_.shape.t * at_.shape.e * sizeof(f16) >= kVApartBytes;
  std::array<LdmSpan<f16>, 2> q_block_;  // per slot: the item's Q rows (q_broadcast)
  std::uint64_t item_first_row_ = 0;     // Q's row of the item's first query row
  LdmSpan<f16> scale_word_;
  std::array<std::vector<LdmSpan<f16>>, 2> per_batch_;  // per slot, per program input: its batch row (fp16)
  LdmSpan<f16> q_, y_;
  std::vector<DmaHandle> q_read_, pending_y_;
  std::vector<float> k_row_;  // one row of K as floats (views.k_rows)
  Range q_rows_;              // the rows q_read_ reads (empty once used)
  std::vector<float> q_floats_, y_floats_;
  std::vector<f16> halves_;
};

}  // namespace

void attention_kernel(Core& core, const AttentionArgs& args) {
  AttentionCore(core, args).run_attention();
}

}  // namespace ldmsim::fusion
