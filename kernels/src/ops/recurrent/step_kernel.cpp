// The recurrent step kernel: a column-wise streaming matrix-vector product per time step.
// Core (part, slot) holds the rows of hidden units [u0, u1) (all four gate slots of each, so the gates of a unit
// meet on one core) and the padded columns [p0, p1) of W(n). It multiplies the x_t columns as soon as x_t is read
// (the x part of step t+1 is done at the end of step t, while partition 0 computes the gates), then the h_(t-1)
// columns once h_(t-1) is published; partitions' partial sums meet in partition 0 by a pairwise adder tree through
// main memory (one barrier per level); partition 0 applies the cell and publishes h_t (fp32, double-buffered) and
// writes Y. Zero blocks of W(n) (GRU's split candidate rows) are skipped. A task spread over several core groups
// gives each group a share of the hidden units; its groups exchange h at node barriers.
#include <cmath>
#include <cstdint>
#include <memory>
#include <source_location>

#include "../op_support.hpp"
#include "../tile_math.hpp"
#include "recurrent_kernel.hpp"

namespace ldmsim::ops::recurrent {

namespace {

/// Gate slots whose rows a product touches (bit k: slot k).
using SlotMask = std::uint8_t;
constexpr SlotMask kAllSlots = 0b1111;

/// Vector instructions of one sigmoid or tanh (an exp by polynomial and a divide) and of the cell arithmetic.
constexpr std::uint32_t kActivationOps = 10;

float sigmoid(float v) {
  return 1.0f / (1.0f + std::exp(-v));
}

/// This core's place in the mapping.
struct Coords {
  std::size_t part = 0, slot = 0;
  std::size_t u0 = 0, u1 = 0;  ///< hidden units
  std::size_t x0 = 0, x1 = 0;  ///< columns of the x part (padded)
  std::size_t h0 = 0, h1 = 0;  ///< columns of the h part (0 = h's first element)

  std::size_t units() const { return u1 - u0; }
  std::size_t rows() const { return 4 * units(); }
  std::size_t nx() const { return x1 - x0; }
  std::size_t nh() const { return h1 - h0; }
  bool owner() const { return part == 0 && units() > 0; }
};

Coords place(const Core& core, const CellShape& s, const RecurrentMapping& m, const StepTask& task) {
  Coords c;
  const auto id = static_cast<std::size_t>(core.id());
  c.part = id / m.cores_per_part;
  c.slot = id % m.cores_per_part;
  if (c.part >= m.ep) return c;
  const GateMatrixLayout gl = s.gate_layout();
  // The group's share of the hidden units, then this core's block of it.
  const auto group_in_task = static_cast<std::size_t>(core.cg() - task.group);
  const std::size_t g0 = std::min(s.hidden, group_in_task * m.units_per_group);
  const std::size_t g1 = std::min(s.hidden, g0 + m.units_per_group);
  c.u0 = std::min(g1, g0 + c.slot * m.units_per_core);
  c.u1 = std::min(g1, c.u0 + m.units_per_core);
  const std::size_t p0 = std::min(gl.row_pitch(), c.part * m.column_block);
  const std::size_t p1 = std::min(gl.row_pitch(), p0 + m.column_block);
  const std::size_t xp = gl.x_pitch();
  c.x0 = std::min(p0, xp);
  c.x1 = std::min(p1, xp);
  c.h1 = p1 > xp ? p1 - xp : 0;
  c.h0 = std::min(c.h1, p0 > xp ? p0 - xp : 0);
  return c;
}

/// The slots whose x or h columns are not all zero: GRU's candidate rows split into an input part (slot 2) and a
/// recurrent part (slot 3); with linear_before_reset 0 the recurrent part waits for r * h_(t-1).
SlotMask x_slots(const CellShape& s) {
  return s.kind == CellKind::kLstm ? kAllSlots : SlotMask{0b0111};
}
SlotMask h_slots(const CellShape& s) {
  if (s.kind == CellKind::kLstm) return kAllSlots;
  return s.linear_before_reset ? SlotMask{0b1011} : SlotMask{0b0011};
}

/// Strided transfer of `rows` runs of `run` elements, `pitch` elements apart (one contiguous transfer when the
/// runs touch).
template <typename T>
DmaHandle get_rows(Core& core, LdmSpan<T> dst, DevicePtr<const T> src, std::size_t rows, std::size_t run,
                   std::size_t pitch, std::source_location site = std::source_location::current()) {
  if (rows == 1 || pitch == run) return core.get(dst.first(rows * run), src, site);
  return core.get_strided(dst.first(rows * run), src, run * sizeof(T), (pitch - run) * sizeof(T), site);
}
template <typename T>
DmaHandle put_rows(Core& core, DevicePtr<T> dst, LdmSpan<T> src, std::size_t rows, std::size_t run, std::size_t pitch,
                   std::source_location site = std::source_location::current()) {
  const LdmSpan<const T> from(src.first(rows * run));
  if (rows == 1 || pitch == run) return core.put(dst, from, site);
  return core.put_strided(dst, from, run * sizeof(T), (pitch - run) * sizeof(T), site);
}

/// This core's block of W(n): resident (read once, kept in ldm, converted once) or streamed in row chunks per use.
class WeightBlock {
 public:
  enum class Part : std::uint8_t { kX, kH };

  WeightBlock(Core& core, DevicePtr<const f16> matrix, const GateMatrixLayout& gl, const Coords& c, bool resident,
              bool timing_only)
      : core_(core), matrix_(matrix), gl_(gl), c_(c), resident_(resident), timing_only_(timing_only) {
    if (c.rows() == 0 || !resident) return;
    for (const Part p : {Part::kX, Part::kH}) {
      const std::size_t len = width(p);
      if (len == 0) continue;
      auto block = core.ldm().alloc<f16>(c.rows() * len);
      get_rows(core, block, first(p), c.rows(), len, gl.row_pitch()).wait();
      if (timing_only_) continue;  // nothing reads the host copy
      auto& host = p == Part::kX ? x_ : h_;
      host = std::make_unique_for_overwrite<float[]>(block.size());  // every element is written next
      to_floats(block, 0, block.size(), host.get());
    }
  }

  /// Allocates the chunk buffers a streamed block reads through (after the kernel's other buffers).
  void reserve_chunks() {
    if (resident_ || c_.rows() == 0) return;
    const std::size_t len = std::max(width(Part::kX), width(Part::kH));
    if (len == 0) return;
    const std::size_t free_bytes = core_.ldm().capacity() - core_.ldm().used();
    chunk_rows_ = std::clamp<std::size_t>(free_bytes / (2 * len * sizeof(f16) + 64), 1, c_.rows());
    for (auto& buf : chunks_) buf = core_.ldm().alloc<f16>(chunk_rows_ * len);
    if (!timing_only_) scratch_ = std::make_unique_for_overwrite<float[]>(chunk_rows_ * len);
  }

  /// acc[row][b] += W(n)[row, part] . vec[b][col] for the rows of `slots`.
  void multiply(Part p, SlotMask slots, const float* vec, std::size_t bs, float* acc) {
    const std::size_t len = width(p), rows = c_.rows();
    if (len == 0 || rows == 0) return;
    if (resident_) {
      multiply_rows(p == Part::kX ? x_.get() : h_.get(), 0, rows, len, slots, vec, bs, acc);
      return;
    }
    // Streamed: chunk i+1 is read while chunk i is multiplied.
    const auto read = [&](std::size_t at, std::size_t slot) {
      const std::size_t n = std::min(chunk_rows_, rows - at);
      return get_rows(core_, chunks_[slot], first(p) + at * gl_.row_pitch(), n, len, gl_.row_pitch());
    };
    DmaHandle next = read(0, 0);
    for (std::size_t at = 0, slot = 0; at < rows; at += chunk_rows_, slot ^= 1) {
      next.wait();
      const std::size_t n = std::min(chunk_rows_, rows - at);
      if (!timing_only_) to_floats(chunks_[slot], 0, n * len, scratch_.get());
      if (at + chunk_rows_ < rows) next = read(at + chunk_rows_, slot ^ 1);
      multiply_rows(scratch_.get(), at, at + n, len, slots, vec, bs, acc);
    }
  }

 private:
  std::size_t width(Part p) const { return p == Part::kX ? c_.nx() : c_.nh(); }
  DevicePtr<const f16> first(Part p) const {
    const std::size_t col = p == Part::kX ? c_.x0 : gl_.x_pitch() + c_.h0;
    return matrix_ + 4 * c_.u0 * gl_.row_pitch() + col;
  }
  // Rows [r0, r1) of the block, whose weights start at w (row r0 first, `len` apart).
  void multiply_rows(const float* w, std::size_t r0, std::size_t r1, std::size_t len, SlotMask slots, const float* vec,
                     std::size_t bs, float* acc) {
    std::uint64_t counted = 0;
    const auto selected = [slots](std::size_t r) { return ((static_cast<unsigned>(slots) >> (r % 4)) & 1u) != 0; };
    for (std::size_t r = r0; r < r1;) {  // runs of consecutive selected rows, one product each
      if (!selected(r)) {
        ++r;
        continue;
      }
      std::size_t end = r + 1;
      while (end < r1 && selected(end)) ++end;
      if (!timing_only_) multiply_add_dots(w + (r - r0) * len, vec, acc + r * bs, end - r, bs, len, bs);
      counted += end - r;
      r = end;
    }
    core_.compute(core_.arch().compute.matmul_tile(DataType::kF32, bs, counted, len, true));
  }

  Core& core_;
  DevicePtr<const f16> matrix_;
  GateMatrixLayout gl_;
  Coords c_;
  bool resident_;
  bool timing_only_;                // the search's trials: the products are charged, not computed
  std::unique_ptr<float[]> x_, h_;  // resident blocks, converted once
  std::size_t chunk_rows_ = 0;
  std::array<LdmSpan<f16>, 2> chunks_{};
  std::unique_ptr<float[]> scratch_;
};

/// One core's run of one task.
class StepRunner {
 public:
  StepRunner(Core& core, const StepArgs& a, const StepTask& task)
      : core_(core),
        a_(a),
        s_(a.shape),
        m_(a.mapping),
        task_(task),
        gl_(s_.gate_layout()),
        c_(place(core, s_, m_, task)),
        bs_(task.b1 - task.b0),
        weights_(core, a.gate_matrix[task.dir], gl_, c_, m_.resident, a.timing_only) {
    Ldm& ldm = core.ldm();
    const std::size_t rows = c_.rows(), units = c_.units();
    if (rows > 0) {
      acc_ = ldm.alloc<float>(rows * bs_);
      acc_x_ = ldm.alloc<float>(rows * bs_);
      if (s_.two_pass()) acc2_ = ldm.alloc<float>(rows * bs_);
      if (m_.ep > 1) incoming_ = ldm.alloc<float>(rows * bs_);
      vec_ = ldm.alloc<float>(std::max({std::size_t{1}, c_.nx(), c_.nh(), units}) * bs_);  // also publish's
      if (c_.nx() > 0) x_read_ = ldm.alloc<f16>(c_.nx() * bs_);
      if (c_.nh() > 0) h_read_ = ldm.alloc<float>(c_.nh() * bs_);
    }
    if (c_.owner()) {
      bias_ = ldm.alloc<float>(rows);
      state_ = ldm.alloc<float>(units * bs_);  // c (LSTM) or h_(t-1) (GRU)
      gate_ = ldm.alloc<float>(units * bs_);   // GRU: z between the two passes
      h_out_ = ldm.alloc<float>(units * bs_);  // h_t by batch row, for the exchange
      y_out_ = ldm.alloc<f16>(tiling::ceil_even(units) * bs_);
      std::fill(y_out_.data(), y_out_.data() + y_out_.size(), f16{});
    }
    weights_.reserve_chunks();
  }

  void run() {
    start();
    for (std::size_t s = 0; s < s_.seq; ++s) step(s);
    finish();
  }

 private:
  std::size_t time_of(std::size_t s) const { return s_.reverse(task_.dir) ? s_.seq - 1 - s : s; }

  // Where h is exchanged: the group, or every group of a task that spans several (a node barrier).
  void sync_exchange() { core_.barrier(task_.groups > 1 ? Scope::kNode : Scope::kGroup); }

  // Initial state, h_0 published, and the x part of the first step.
  void start() {
    if (c_.owner()) {
      core_.get(bias_, a_.gate_bias[task_.dir] + 4 * c_.u0).wait();
      read_state(a_.h0, h_out_);
      if (s_.kind == CellKind::kLstm) {
        read_state(a_.c0, state_);
      } else {
        std::copy_n(h_out_.data(), h_out_.size(), state_.data());
      }
      publish(h_out_, task_.h_exchange[0]);
    }
    multiply_x(0);
    sync_exchange();
  }

  // States [(d, b), hidden] of this core's units as [unit][b] floats; zeros when the input is absent.
  void read_state(const TensorRef& t, LdmSpan<float> out) {
    std::fill(out.data(), out.data() + out.size(), 0.0f);
    if (!t.present()) return;
    auto buf = core_.ldm().alloc<f16>(std::min<std::size_t>(c_.units() + 4, 4096));
    std::vector<f16> row(c_.units());
    for (std::size_t b = 0; b < bs_; ++b) {
      const std::size_t first = (task_.dir * s_.batch + task_.b0 + b) * s_.hidden + c_.u0;
      tiling::gather(core_, buf, t.ptr, t.layout, first, c_.units(), row.data());
      for (std::size_t i = 0; i < c_.units(); ++i) out[i * bs_ + b] = static_cast<float>(row[i]);
    }
    core_.ldm().free(buf);
  }

  // Puts this core's units of `values` ([unit][b]) into an exchange buffer [b][h_pitch].
  void publish(LdmSpan<float> values, DevicePtr<float> exchange) {
    auto& staged = vec_;  // [b][unit] for the strided put
    for (std::size_t i = 0; i < c_.units(); ++i)
      for (std::size_t b = 0; b < bs_; ++b) staged[b * c_.units() + i] = values[i * bs_ + b];
    put_rows(core_, exchange + c_.u0, staged, bs_, c_.units(), gl_.h_pitch()).wait();
  }

  // acc_x = W(n)[rows, x columns] x_t of step s.
  void multiply_x(std::size_t s) {
    if (c_.rows() == 0) return;
    std::fill(acc_x_.data(), acc_x_.data() + acc_x_.size(), 0.0f);
    if (c_.nx() == 0) return;
    const std::size_t row = time_of(s) * s_.batch + task_.b0;
    const auto src = DevicePtr<const f16>(a_.x.ptr) + a_.x.layout.offset(row, c_.x0, 0, 0);
    // X's rows hold the gate matrix's pad column when staged with it; unpadded (--staging none) the pad column is
    // the next row's first element, or past the tensor's end: only the real columns are read, the pad taken as 0.
    const std::size_t pitch = a_.x.layout.chw_pitch;
    const std::size_t cols = c_.x1 <= pitch ? c_.nx() : (pitch > c_.x0 ? pitch - c_.x0 : 0);
    if (cols == 0) {
      std::fill_n(vec_.data(), c_.nx() * bs_, 0.0f);
    } else {
      get_rows(core_, x_read_, src, bs_, cols, pitch).wait();
      if (cols == c_.nx()) {
        to_floats(x_read_, 0, c_.nx() * bs_, vec_.data());  // [b][column], as the products read it
      } else {
        for (std::size_t b = 0; b < bs_; ++b) {
          to_floats(x_read_, b * cols, cols, vec_.data() + b * c_.nx());
          std::fill_n(vec_.data() + b * c_.nx() + cols, c_.nx() - cols, 0.0f);
        }
      }
    }
    weights_.multiply(WeightBlock::Part::kX, x_slots(s_), vec_.data(), bs_, acc_x_.data());
  }

  // acc += W(n)[rows of `slots`, h columns] v, v read from an exchange buffer [b][h_pitch].
  void multiply_h(DevicePtr<float> exchange, SlotMask slots, LdmSpan<float> acc) {
    if (c_.rows() == 0 || c_.nh() == 0) return;
    get_rows(core_, h_read_, DevicePtr<const float>(exchange) + c_.h0, bs_, c_.nh(), gl_.h_pitch()).wait();
    weights_.multiply(WeightBlock::Part::kH, slots, h_read_.data(), bs_, acc.data());
  }

  // Pairwise adder tree over the partitions: at distance d, partition p (p % 2d == d) sends its sums to p - d.
  void reduce(LdmSpan<float> acc) {
    const std::size_t n = c_.rows() * bs_;
    const auto group_in_task = static_cast<std::size_t>(core_.cg() - task_.group);
    const auto slot_of = [&](std::size_t part) {
      return task_.partials +
             ((group_in_task * m_.ep + part) * m_.cores_per_part + c_.slot) * 4 * m_.units_per_core * bs_;
    };
    for (std::size_t d = 1; d < m_.ep; d *= 2) {
      const bool sends = c_.part < m_.ep && c_.part % (2 * d) == d;
      if (sends && n > 0) core_.put(slot_of(c_.part), LdmSpan<const float>(acc.first(n))).wait();
      core_.barrier();
      if (c_.part % (2 * d) == 0 && c_.part + d < m_.ep && n > 0) {
        core_.get(incoming_.first(n), DevicePtr<const float>(slot_of(c_.part + d))).wait();
        for (std::size_t i = 0; i < n; ++i) acc[i] += incoming_[i];
        core_.compute(core_.arch().compute.elementwise(DataType::kF32, n, 1, 2, 1));
      }
    }
  }

  float pre(std::size_t unit, std::size_t slot, std::size_t b, const LdmSpan<float>& acc) const {
    const std::size_t row = 4 * unit + slot;
    return acc[row * bs_ + b] + bias_[row];
  }

  void step(std::size_t s) {
    const std::size_t cur = s % 2;
    if (c_.rows() > 0) std::copy_n(acc_x_.data(), acc_.size(), acc_.data());
    multiply_h(task_.h_exchange[cur], h_slots(s_), acc_);
    if (m_.ep > 1) reduce(acc_);
    if (s_.two_pass()) second_pass(cur);
    if (c_.owner()) {
      cell();
      write_outputs(s);
    }
    if (s + 1 < s_.seq) multiply_x(s + 1);
    sync_exchange();
  }

  // GRU with linear_before_reset 0: z and r, then R_h (r * h_(t-1)) through a second exchange and tree.
  void second_pass(std::size_t cur) {
    if (c_.owner()) {
      for (std::size_t i = 0; i < c_.units(); ++i) {
        for (std::size_t b = 0; b < bs_; ++b) {
          gate_[i * bs_ + b] = sigmoid(pre(i, 0, b, acc_));
          h_out_[i * bs_ + b] = sigmoid(pre(i, 1, b, acc_)) * state_[i * bs_ + b];
        }
      }
      core_.compute(core_.arch().compute.elementwise(DataType::kF32, c_.units() * bs_, 2 * kActivationOps + 1, 4, 2));
      publish(h_out_, task_.rh_exchange[cur]);
    }
    sync_exchange();
    if (c_.rows() > 0) std::fill(acc2_.data(), acc2_.data() + acc2_.size(), 0.0f);
    multiply_h(task_.rh_exchange[cur], SlotMask{0b1000}, acc2_);
    if (m_.ep > 1) reduce(acc2_);
  }

  // The cell on this core's units: h_t into h_out_, the state updated.
  void cell() {
    const std::size_t units = c_.units();
    for (std::size_t i = 0; i < units; ++i) {
      for (std::size_t b = 0; b < bs_; ++b) {
        const std::size_t at = i * bs_ + b;
        float& state = state_[at];
        if (s_.kind == CellKind::kLstm) {  // slots i, o, f, c
          const float in = sigmoid(pre(i, 0, b, acc_)), out = sigmoid(pre(i, 1, b, acc_));
          const float forget = sigmoid(pre(i, 2, b, acc_)), cand = std::tanh(pre(i, 3, b, acc_));
          state = forget * state + in * cand;
          h_out_[at] = out * std::tanh(state);
        } else {
          const float z = s_.two_pass() ? gate_[at] : sigmoid(pre(i, 0, b, acc_));
          float n = 0.0f;
          if (s_.two_pass()) {
            n = std::tanh(pre(i, 2, b, acc_) + acc2_[(4 * i + 3) * bs_ + b] + bias_[4 * i + 3]);
          } else {
            n = std::tanh(pre(i, 2, b, acc_) + sigmoid(pre(i, 1, b, acc_)) * pre(i, 3, b, acc_));
          }
          state = (1.0f - z) * n + z * state;
          h_out_[at] = state;
        }
      }
    }
    const std::uint32_t activations = s_.kind == CellKind::kLstm ? 5 : 3;
    core_.compute(
        core_.arch().compute.elementwise(DataType::kF32, units * bs_, activations * kActivationOps + 4, 5, 2));
  }

  // Y rows of step s and h_t into the next exchange buffer.
  void write_outputs(std::size_t s) {
    const std::size_t t = time_of(s);
    put_y(a_.y, (t * s_.dirs + task_.dir) * s_.batch + task_.b0, h_out_);
    publish(h_out_, task_.h_exchange[(s + 1) % 2]);
  }

  // Puts [unit][b] floats as fp16 into rows row0.. of a [rows, hidden] tensor, this core's units.
  void put_y(const TensorRef& t, std::size_t row0, LdmSpan<float> values) {
    // The pad element of an odd last block goes along, where the rows hold it (not unpadded, --staging none).
    const std::size_t even = tiling::ceil_even(c_.units());
    const std::size_t run = c_.u0 + even <= t.layout.chw_pitch ? even : c_.units();
    for (std::size_t b = 0; b < bs_; ++b)
      for (std::size_t i = 0; i < c_.units(); ++i) y_out_[b * run + i] = f16(values[i * bs_ + b]);
    put_rows(core_, t.ptr + t.layout.offset(row0, c_.u0, 0, 0), y_out_, bs_, run, t.layout.chw_pitch).wait();
  }

  void finish() {
    if (!c_.owner()) return;
    const std::size_t row0 = task_.dir * s_.batch + task_.b0;
    put_y(a_.y_h, row0, s_.kind == CellKind::kLstm ? h_out_ : state_);
    if (a_.y_c.present()) put_y(a_.y_c, row0, state_);
  }

  Core& core_;
  const StepArgs& a_;
  const CellShape& s_;
  const RecurrentMapping& m_;
  const StepTask& task_;
  GateMatrixLayout gl_;
  Coords c_;
  std::size_t bs_;
  WeightBlock weights_;
  LdmSpan<float> acc_, acc_x_, acc2_, incoming_, vec_, h_read_, bias_, state_, gate_, h_out_;
  LdmSpan<f16> x_read_, y_out_;
};

void step_kernel(Core& core, const StepArgs& a) {
  for (const StepTask& task : a.tasks) {
    if (core.cg() < task.group || core.cg() >= task.group + task.groups) continue;
    StepRunner(core, a, task).run();
    core.ldm().reset();
  }
}

}  // namespace

void run_steps(Machine& machine, const StepArgs& args, const std::string& label) {
  // Tasks on several groups: each task's groups are one node-sync set (run together on one host thread; the sets,
  // and so the tasks, spread over the host threads).
  std::vector<int> groups;
  std::vector<std::vector<int>> sets;
  for (const StepTask& t : args.tasks) {
    if (t.groups > 1) sets.emplace_back();
    for (int g = t.group; g < t.group + t.groups; ++g) {
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
      if (t.groups > 1) sets.back().push_back(g);
    }
  }
  std::sort(groups.begin(), groups.end());
  machine.launch(LaunchSpec{.groups = groups, .name = label, .node_sync_sets = sets}, step_kernel, args).join();
}

}  // namespace ldmsim::ops::recurrent
