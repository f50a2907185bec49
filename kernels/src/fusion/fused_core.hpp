// Private: one core's run of a fused program (fused_kernel.cpp runs it as is; the attention kernel derives from it):
// per core, its rows (or its part of a row's K in a team), tile by tile: every streamed input's reads in flight at
// once, the program's steps on fp32 ldm slots, the outputs put as whole 4-byte words. A team's partial reductions go
// through main memory behind a group barrier.
#pragma once

#include <algorithm>
#include <array>
#include <boost/container/small_vector.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "../ops/op_support.hpp"
#include "../ops/reduction_math.hpp"
#include "fused_kernel_impl.hpp"
#include "fused_layout.hpp"

namespace ldmsim::fusion {

using tiling::Range;

/// One core's run of the program. A kernel that computes some inputs in ldm or uses some outputs there (the
/// attention kernel: its scores come from a product, its probabilities go into another) derives and overrides the
/// hooks; the program never reads those inputs from nor writes those outputs to main memory.
class FusedCore {
 public:
  FusedCore(Core& core, const KernelArgs& a)
      : core_(core), a_(a), p_(*a.program), m_(*a.mapping), f_(p_.frame), slots_(*a.slots), index_(a.index) {}
  FusedCore(const FusedCore&) = delete;
  FusedCore& operator=(const FusedCore&) = delete;
  virtual ~FusedCore() = default;

  void run() {
    if (m_.team > 1) {
      run_team();
      return;
    }
    const std::size_t me = worker();
    const Range share = me < workers() ? row_share(f_.rows(), workers(), me, m_.row_pairs) : Range{};
    idle_ = share.empty();
    // When reading the resident inputs once for the group is cheaper, every core of the group allocates (idle
    // ones too) so that the first core reads each of them once for all.
    group_reads_ = group_read_pays();
    if (!group_reads_ && share.empty()) return;
    allocate(m_.tile_rows, {0, f_.k()});
    finish_group_reads();
    if (share.empty()) return;
    for (std::uint64_t at = share.begin; at < share.end; at += m_.tile_rows) {
      run_tile({at, std::min<std::uint64_t>(share.end, at + m_.tile_rows)});
    }
    finish();
  }

 protected:
  /// External input k is computed in ldm by supply(), not read.
  virtual bool supplied(std::size_t /*input*/) const { return false; }
  /// External output k is used in ldm by consume(), not written.
  virtual bool consumed(std::size_t /*output*/) const { return false; }
  /// Called first for each tile: issues reads the supply will wait for, so they overlap the inputs' reads.
  virtual void prepare(Range /*rows*/) {}
  /// Fills the supplied inputs' rows of the tile (after the other inputs' reads landed).
  virtual void supply(Range /*rows*/) {}
  /// Uses the consumed outputs' rows of the tile (after the program's steps).
  virtual void consume(Range /*rows*/) {}

  /// A team of m_.team cores of this core group per row; teams interleaved over the groups; every core of a group
  /// passes the same number of barriers (the group's busiest team's), idle ones included.
  void run_team() {
    const std::uint32_t team = m_.team, groups = core_.arch().core_groups;
    const std::uint32_t teams_per_group = static_cast<std::uint32_t>(core_.group_size()) / team;
    // The teams this machine has (a view of fewer groups than the mapping was made for deals the rows to them).
    const std::uint64_t teams = std::max<std::uint64_t>(
        1, std::min<std::uint64_t>(m_.workers / team, static_cast<std::uint64_t>(teams_per_group) * groups));
    const std::uint64_t my_team =
        static_cast<std::uint64_t>(core_.id()) / team * groups + static_cast<std::uint64_t>(core_.cg());
    member_ = static_cast<std::uint32_t>(core_.id()) % team;
    team_slot_ = static_cast<std::uint32_t>(core_.id()) / team;
    const auto items_of = [&](std::uint64_t t) {
      return t < teams && t < f_.rows() ? (f_.rows() - t + teams - 1) / teams : 0;
    };
    std::uint64_t rounds = 0;
    for (std::uint32_t slot = 0; slot < teams_per_group; ++slot) {
      rounds = std::max(rounds,
                        items_of(static_cast<std::uint64_t>(slot) * groups + static_cast<std::uint64_t>(core_.cg())));
    }
    const Range k = tiling::split_even(f_.k(), team, member_);
    allocate(1, k);
    const std::uint64_t mine = items_of(my_team);
    for (std::uint64_t round = 0; round < rounds; ++round) {
      parity_ = round % 2;
      if (round < mine) {
        run_tile({my_team + round * teams, my_team + round * teams + 1});
      } else {
        for (std::size_t r = 0; r < p_.reductions(); ++r) core_.barrier();
      }
    }
    finish();
  }

  std::uint64_t block_of(const FusedValue& v) const { return (v.k ? k_.size() : 1) * (v.i ? f_.i() : 1); }

  void allocate(std::uint64_t tile_rows, Range k) {
    k_ = k;
    const std::uint64_t block = tile_rows * max_k_part(f_.k(), m_.team) * f_.i();
    auto& ldm = core_.ldm();
    slot_buf_.reserve(slot_buf_.size() + slots_.slots);
    for (std::size_t s = 0; s < slots_.slots; ++s) slot_buf_.push_back(ldm.alloc<float>(block));
    resident_.assign(p_.values.size(), nullptr);
    streamed_.resize(p_.inputs.size());
    half_ = ldm.alloc<f16>(block + 4);
    staging_ = ldm.alloc<f16>(block + 4);
    put_buf_ = ldm.alloc<f16>(block + tile_rows + 4);  // a padded layout adds up to one element per row
    const GroupPlan plan = group_reads_ ? group_read_plan(tile_rows) : GroupPlan{};
    for (std::size_t k_in = 0; k_in < p_.inputs.size(); ++k_in) {
      const std::size_t v = p_.inputs[k_in];
      if (supplied(k_in)) continue;
      if (!m_.resident[k_in]) {
        streamed_[k_in] = ldm.alloc<f16>(streamed_buffer_elements(block, tile_rows));
        continue;
      }
      if (resident_[v] != nullptr) continue;  // one input feeding two operands
      const FusedValue& val = p_.values[v];
      const std::uint64_t n = val.rows(f_) * val.row_elements(f_);
      resident_[v] = ldm.alloc<float>(n).data();
      if (k_in < plan.size() && plan[k_in]) {
        group_reads_list_.push_back(
            {.input = k_in, .buffer = plan[k_in]->buffer, .at = plan[k_in]->at, .n = n, .to = resident_[v]});
        continue;
      }
      // Read by this core now, through half_ and staging_ (not by a core without rows, which only allocates and
      // passes the barriers).
      own_resident_reads_ = true;
      if (idle_) continue;
      for (std::uint64_t done = 0; done < n; done += half_.size() - 4) {
        const std::uint64_t len = std::min<std::uint64_t>(half_.size() - 4, n - done);
        ops::gather_floats(core_, staging_, a_.in[k_in], a_.in_layout[k_in], done, len, resident_[v] + done);
      }
    }
    // A BCAST get writes every receiver's ldm when it is issued: while cores may still read their own resident
    // inputs through the same buffers, the group reads wait for finish_group_reads' first barrier.
    if (!own_resident_reads_) issue_group_reads();
    if (m_.team > 1) {
      partial_ = ldm.alloc<float>(f_.i());
      exchange_ = ldm.alloc<float>(static_cast<std::size_t>(m_.team) * f_.i());
    }
  }

  /// Whether one read of the resident inputs for the group (the first core's, then three barriers) costs less than
  /// each busy core reading its own, queued on the engine's channels. The same answer on every core of a group.
  bool group_read_pays() const {
    double service = 0;  // one core's reads of those the group would read
    const GroupPlan plan = group_read_plan(m_.tile_rows);
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
      if (!plan[k]) continue;
      const FusedValue& val = p_.values[p_.inputs[k]];
      service += core_.get_service_cycles(a_.in[k].addr(), val.rows(f_) * val.row_elements(f_) * sizeof(f16));
    }
    const auto busy = static_cast<double>(group_workers()), channels = static_cast<double>(core_.dma_channels());
    return service > 0 && busy / channels * service > service + 3.0 * core_.arch().barrier_cycles;
  }

  /// Where a resident input read once for the group lands: a staging buffer (group_buffer) and its first element.
  struct GroupSlot {
    std::size_t buffer = 0;
    std::uint64_t at = 0;
  };
  using GroupPlan = boost::container::small_vector<std::optional<GroupSlot>, 4>;  // in place for up to 4 inputs
  /// Per external input, its slot when the group reads it once: a resident input whose logical element i is at
  /// offset i (one read) in the first of the three staging buffers (free until the first tile) with room, in input
  /// order. None for the others, which each core reads itself. The buffers' sizes follow from `tile_rows`.
  GroupPlan group_read_plan(std::uint64_t tile_rows) const {
    const std::uint64_t block = tile_rows * max_k_part(f_.k(), m_.team) * f_.i();
    const std::array<std::uint64_t, 3> sizes{block + 4, block + 4, block + tile_rows + 4};  // as allocate() makes them
    std::array<std::uint64_t, 3> used{};
    GroupPlan plan(p_.inputs.size());
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
      if (supplied(k) || !m_.resident[k]) continue;
      bool earlier = false;  // an earlier resident input of the same value: allocate() reads that one
      for (std::size_t e = 0; e < k; ++e)
        earlier = earlier || (p_.inputs[e] == p_.inputs[k] && m_.resident[e] && !supplied(e));
      if (earlier) continue;
      const FusedValue& val = p_.values[p_.inputs[k]];
      const std::uint64_t n = val.rows(f_) * val.row_elements(f_);
      if (n == 0 || !a_.in_layout[k].only_tail_padded()) continue;
      std::size_t b = 0;
      while (b < sizes.size() && used[b] + n + 4 > sizes[b]) ++b;
      if (b == sizes.size()) continue;
      plan[k] = GroupSlot{b, used[b]};
      used[b] += (n + 1) / 2 * 2 + 2;  // the next read starts at an even element
    }
    return plan;
  }

  /// The mapping's workers, at most this machine's cores: a view of fewer groups than the mapping was made for (an
  /// op placed whole on one group) deals all of the rows to the cores it has.
  std::uint64_t workers() const {
    return std::min<std::uint64_t>(m_.workers, static_cast<std::uint64_t>(core_.arch().total_cores()));
  }

  /// This core's worker index (FusedMapping::one_group): its group's core index on the first group when the rows
  /// go to one group (past the last worker elsewhere), else dealt to the groups in turn.
  std::size_t worker() const {
    if (!m_.one_group(static_cast<std::uint64_t>(core_.group_size()))) return tiling::worker_index(core_);
    return core_.cg() == 0 ? static_cast<std::size_t>(core_.id()) : m_.workers;
  }

  /// Cores of this group with rows: shares are non-empty for the first min(workers, rows or row pairs) worker
  /// indices (worker()).
  std::uint64_t group_workers() const {
    const std::uint64_t units = m_.row_pairs ? (f_.rows() + 1) / 2 : f_.rows();
    const std::uint64_t busy = std::min(workers(), units), groups = core_.arch().core_groups;
    const auto cg = static_cast<std::uint64_t>(core_.cg());
    if (m_.one_group(static_cast<std::uint64_t>(core_.group_size()))) return cg == 0 ? busy : 0;
    return busy > cg ? (busy - cg + groups - 1) / groups : 0;
  }

  /// Every core: waits (the group's first core) for the group reads allocate() issued, then converts them to the
  /// resident floats.
  void finish_group_reads() {
    if (group_reads_list_.empty()) return;
    if (own_resident_reads_) {  // the same on every core of the group: the buffers' sizes decide it
      core_.barrier();
      issue_group_reads();
    }
    if (core_.id() == 0) {
      for (GroupRead& g : group_reads_list_) g.handle.wait();
    }
    core_.barrier();
    for (const GroupRead& g : group_reads_list_) ops::to_floats(group_buffer(g.buffer), g.at, g.n, g.to);
    // Not needed for the buffers (each core converts and later stages tiles in its own ldm); it keeps the group's
    // cores starting their tiles together, as the cycle figures in docs/benchmarks.md were measured.
    core_.barrier();
    group_reads_list_.clear();
  }

  /// Where row `row` (tile row `t`) of value v starts, and the K offset its index adds (resident values hold
  /// every K; slots only this core's part).
  float* row_ptr(std::size_t v, std::uint64_t row, std::uint64_t t) {
    const FusedValue& val = p_.values[v];
    if (resident_[v] != nullptr) {
      const std::uint64_t ii = val.i ? f_.i() : 1;
      return resident_[v] + index_[v](row) * val.row_elements(f_) + (val.k ? k_.begin * ii : 0);
    }
    return slot_buf_[slots_.slot[v]].data() + t * block_of(val);
  }

  void run_tile(Range rows) {
    prepare(rows);
    load(rows);
    supply(rows);
    for (const FusedStep& s : p_.steps) {
      if (s.kind == FusedStep::Kind::kPointwise) {
        pointwise(s, rows);
      } else {
        reduce(s, rows);
      }
    }
    store(rows);
    consume(rows);
  }

  /// Issues every streamed input's reads of the tile, then waits and converts them.
  void load(Range rows) {
    struct Pending {
      std::size_t input;
      tiling::RangeRead read;
      std::size_t at;  // in the input's read buffer
      std::uint64_t t, count;
      float* dst;
    };
    // In place for up to 8 reads and 4 row broadcasts a tile.
    boost::container::small_vector<Pending, 8> pending;
    boost::container::small_vector<std::pair<float*, std::uint64_t>, 4> copies;
    for (std::size_t k = 0; k < p_.inputs.size(); ++k) {
      const std::size_t v = p_.inputs[k];
      if (m_.resident[k] || loaded_by_earlier(k) || supplied(k)) continue;
      const FusedValue& val = p_.values[v];
      const std::uint64_t n = block_of(val), row_elements = val.row_elements(f_);
      const std::uint64_t offset = val.k ? k_.begin * (val.i ? f_.i() : 1) : 0;
      std::size_t at = 0;
      for (std::uint64_t r = rows.begin; r < rows.end;) {
        const std::uint64_t t = r - rows.begin, first = index_[v](r);
        float* dst = row_ptr(v, r, t);
        if (r > rows.begin && first == index_[v](r - 1)) {  // a row broadcast: copy the previous row in ldm
          copies.emplace_back(dst, n);
          ++r;
          continue;
        }
        std::uint64_t run = 1;  // consecutive rows of the value read as one when each is read whole
        while (n == row_elements && r + run < rows.end && index_[v](r + run) == first + run) ++run;
        const std::uint64_t logical = first * row_elements + offset, count = n * run;
        const Layout& layout = a_.in_layout[k];
        if (layout.only_tail_padded()) {
          const Range span{logical, logical + count};
          pending.push_back(
              {k, tiling::get_range(core_, streamed_[k].subspan(at, count + 2), a_.in[k], layout.total, span), at, t,
               count, dst});
          at += tiling::ceil_even(count + 2);  // the next read's ldm address stays on a 4-byte word
        } else {
          ops::gather_floats(core_, staging_, a_.in[k], layout, logical, count, dst);
        }
        r += run;
      }
    }
    for (Pending& q : pending) {
      q.read.handle.wait();
      ops::to_floats(streamed_[q.input], q.at + q.read.first, q.count, q.dst);
    }
    // Row broadcasts copy the previous row once its read has landed (in row order: a copy may copy a copy).
    for (auto [dst, n] : copies) std::copy_n(dst - n, n, dst);
  }

  /// True when an earlier external input loads the same value (one tensor read by two ops of the group).
  bool loaded_by_earlier(std::size_t k) const {
    return std::find(p_.inputs.begin(), p_.inputs.begin() + static_cast<std::ptrdiff_t>(k), p_.inputs[k]) !=
           p_.inputs.begin() + static_cast<std::ptrdiff_t>(k);
  }

  void pointwise(const FusedStep& s, Range rows) {
    const FusedValue& rv = p_.values[s.result];
    const std::uint64_t kn = rv.k ? k_.size() : 1, in = rv.i ? f_.i() : 1;
    const FusedValue& av = p_.values[s.args[0]];
    const FusedValue* bv = s.args.size() > 1 ? &p_.values[s.args[1]] : nullptr;
    const std::uint64_t ai = av.i ? f_.i() : 1, bi = bv != nullptr && bv->i ? f_.i() : 1;
    // A row's kn x in results are one run when every operand steps through them by 1 or 0 (both the result's
    // axes, or the one it has more than 1 of; or neither): one call instead of one per K element (a LayerNorm's
    // frame has I = 1). Each element is computed from the same operands either way.
    const auto run_step = [&](const FusedValue& v) -> std::optional<std::size_t> {
      if ((v.k || kn == 1) && (v.i || in == 1)) return 1;
      if ((!v.k || kn == 1) && (!v.i || in == 1)) return 0;
      return std::nullopt;
    };
    const std::optional<std::size_t> a_step = run_step(av);
    const std::optional<std::size_t> b_step = bv != nullptr ? run_step(*bv) : std::optional<std::size_t>{0};
    if (a_step && b_step) {
      const std::uint64_t n = kn * in;
      for (std::uint64_t r = rows.begin; r < rows.end; ++r) {
        const std::uint64_t t = r - rows.begin;
        float* y = row_ptr(s.result, r, t);
        const float* x0 = row_ptr(s.args[0], r, t);
        const float* x1 = bv != nullptr ? row_ptr(s.args[1], r, t) : nullptr;
        if (s.run) {
          s.run(x0, *a_step, x1, x1 != nullptr ? *b_step : 0, y, n);
          continue;
        }
        for (std::uint64_t e = 0; e < n; ++e) y[e] = s.fn(x0[e * *a_step], x1 != nullptr ? x1[e * *b_step] : 0.0f);
      }
      core_.compute({.flops = s.flops * n * rows.size()});
      return;
    }
    for (std::uint64_t r = rows.begin; r < rows.end; ++r) {
      const std::uint64_t t = r - rows.begin;
      float* y = row_ptr(s.result, r, t);
      const float* x0 = row_ptr(s.args[0], r, t);
      const float* x1 = bv != nullptr ? row_ptr(s.args[1], r, t) : nullptr;
      for (std::uint64_t kk = 0; kk < kn; ++kk) {
        const float* a0 = x0 + (av.k ? kk * ai : 0);
        const float* b0 = x1 != nullptr ? x1 + (bv->k ? kk * bi : 0) : nullptr;
        float* out = y + kk * in;
        if (s.run) {
          s.run(a0, av.i ? 1 : 0, b0, b0 != nullptr && bv->i ? 1 : 0, out, in);
          continue;
        }
        for (std::uint64_t ii = 0; ii < in; ++ii) {
          out[ii] = s.fn(a0[av.i ? ii : 0], b0 != nullptr ? b0[bv->i ? ii : 0] : 0.0f);
        }
      }
    }
    core_.compute({.flops = s.flops * kn * in * rows.size()});
  }

  void reduce(const FusedStep& s, Range rows) {
    const FusedValue& av = p_.values[s.args[0]];
    const std::uint64_t in = av.i ? f_.i() : 1, kn = av.k ? k_.size() : 1;
    for (std::uint64_t r = rows.begin; r < rows.end; ++r) {
      const std::uint64_t t = r - rows.begin;
      const float* x = row_ptr(s.args[0], r, t);
      float* y = row_ptr(s.result, r, t);
      for (std::uint64_t ii = 0; ii < in; ++ii) {
        float acc = ops::initial(s.mode);
        if (av.k) {
          double sum = 0.0;  // sums accumulate in double, as the unfused reduction's do per chunk
          for (std::uint64_t kk = 0; kk < kn; ++kk) {
            const float v = x[kk * in + ii];
            if (s.mode == ReduceMode::kSum || s.mode == ReduceMode::kMean) {
              sum += v;
            } else {
              acc = ops::combine(s.mode, acc, v);
            }
          }
          if (s.mode == ReduceMode::kSum || s.mode == ReduceMode::kMean) acc = static_cast<float>(sum);
        } else if (!k_.empty()) {  // a value constant along K: its K copies
          acc =
              s.mode == ReduceMode::kSum || s.mode == ReduceMode::kMean ? x[ii] * static_cast<float>(k_.size()) : x[ii];
        }
        y[ii] = acc;
      }
      if (m_.team > 1) exchange(s, y, in);
      if (s.mode == ReduceMode::kMean) {
        for (std::uint64_t ii = 0; ii < in; ++ii) y[ii] /= static_cast<float>(f_.k());
      }
    }
    core_.compute({.flops = kn * in * rows.size()});
  }

  /// Combines the team's partials of one reduction (in member order: the result is the same on every member).
  void exchange(const FusedStep& s, float* y, std::uint64_t in) {
    const std::size_t reduction = static_cast<std::size_t>(&s - p_.steps.data());
    const std::uint64_t I = f_.i(), team = m_.team;
    // scratch: [team slot][parity][step][member][I] floats in this core group's main memory.
    const std::uint64_t base =
        ((static_cast<std::uint64_t>(team_slot_) * 2 + parity_) * p_.steps.size() + reduction) * team * I;
    std::copy_n(y, in, partial_.data());
    core_
        .put(a_.scratch[static_cast<std::size_t>(core_.cg())] + (base + member_ * I),
             LdmSpan<const float>(partial_.first(in)))
        .wait();
    core_.barrier();
    core_.get(exchange_, DevicePtr<const float>(a_.scratch[static_cast<std::size_t>(core_.cg())] + base)).wait();
    for (std::uint64_t ii = 0; ii < in; ++ii) {
      float acc = ops::initial(s.mode);
      for (std::uint64_t m = 0; m < team; ++m) acc = ops::combine(s.mode, acc, exchange_.data()[m * I + ii]);
      y[ii] = acc;
    }
    core_.compute({.flops = team * in});
  }

  void store(Range rows) {
    for (std::size_t k = 0; k < p_.outputs.size(); ++k) {
      if (consumed(k)) continue;
      const std::size_t v = p_.outputs[k];
      const FusedValue& val = p_.values[v];
      const Layout& layout = a_.out_layout[k];
      const std::uint64_t pitch = layout.chw_pitch, ii = val.i ? f_.i() : 1;
      const std::uint64_t n = block_of(val);
      if (m_.team > 1 && ((!val.k && member_ != 0) || n == 0)) continue;
      const std::uint64_t first = rows.begin * pitch + (m_.team > 1 && val.k ? k_.begin * ii : 0);
      const std::uint64_t last = (rows.end - 1) * pitch + (m_.team > 1 && val.k ? k_.begin * ii : 0) + n;
      // A word is whole: an odd end takes the next element, which is padding (a row's column or the tail).
      const std::uint64_t end = std::min<std::uint64_t>(tiling::ceil_even(last), layout.total);
      if (end - first > put_buf_.size()) {  // the mapping's ldm plan and the layouts disagree: a bug, not input
        throw std::logic_error(fmt::format("fused kernel: {} elements of output {} exceed its {}-element put buffer",
                                           end - first, k, put_buf_.size()));
      }
      pending_put_.wait();
      auto out = put_buf_.first(end - first);
      std::fill(out.span().begin(), out.span().end(), f16{});
      for (std::uint64_t r = rows.begin; r < rows.end; ++r) {
        const float* src = row_ptr(v, r, r - rows.begin);
        ops::to_halves(src, n, out.subspan((r - rows.begin) * pitch, n));
      }
      pending_put_ = core_.put(a_.out[k] + first, LdmSpan<const f16>(out));
    }
  }

  void finish() { pending_put_.wait(); }

  Core& core_;
  const KernelArgs& a_;
  const FusedProgram& p_;
  const FusedMapping& m_;
  const FusionFrame& f_;
  const SlotPlan& slots_;
  const std::vector<RowIndex>& index_;  ///< per value (KernelArgs::index)
  Range k_;
  // Per core and launch, so held in place for the usual sizes (a heap block each cost every core of every launch).
  boost::container::small_vector<LdmSpan<float>, 8> slot_buf_;
  boost::container::small_vector<float*, 16> resident_;
  /// Set before allocate() when every core of the group allocates at once (same allocations, none missing, all
  /// passing finish_group_reads' barriers): the group's first core then reads each contiguous resident input once
  /// for all of them (BCAST into a staging buffer, at the same ldm address everywhere) instead of a read per core.
  bool group_reads_ = false;
  struct GroupRead {
    std::size_t input = 0, buffer = 0;  // the external input; half_, staging_ or put_buf_ (group_buffer)
    std::uint64_t at = 0, n = 0;        // its first element in that buffer, its element count
    float* to = nullptr;                // its resident floats
    DmaHandle handle;                   // the group's first core's; empty on the others
  };
  boost::container::small_vector<GroupRead, 4>
      group_reads_list_;             // planned by allocate(), converted by finish_group_reads()
  bool own_resident_reads_ = false;  // allocate() read some resident input through half_ and staging_
  bool idle_ = false;                // run(): this core has no rows

  /// The group's first core issues the planned group reads.
  void issue_group_reads() {
    if (core_.id() != 0) return;
    for (GroupRead& g : group_reads_list_) {
      // Starting at element 0 the read's first element is the value's first (RangeRead::first is 0).
      const LdmSpan<f16> to = group_buffer(g.buffer);
      g.handle = tiling::get_range_as(core_, tiling::ReadMode::kBcast, to.subspan(g.at, to.size() - g.at),
                                      a_.in[g.input], a_.in_layout[g.input].total, {0, g.n})
                     .handle;
    }
  }
  LdmSpan<f16> group_buffer(std::size_t b) const { return b == 0 ? half_ : b == 1 ? staging_ : put_buf_; }
  boost::container::small_vector<LdmSpan<f16>, 8> streamed_;
  LdmSpan<f16> half_, staging_, put_buf_;
  LdmSpan<float> partial_, exchange_;
  DmaHandle pending_put_;
  std::uint32_t member_ = 0, team_slot_ = 0;
  std::uint64_t parity_ = 0;
};

}  // namespace ldmsim::fusion
