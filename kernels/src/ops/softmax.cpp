// softmax over the trailing dimensions from `axis` (default 1: the c*h*w of each sample), on the 2-D view
// [rows, columns]: 2-D class (rows move in pairs when a row has an odd length, or a zero follows every row).
// A core takes a row group (two rows when the row pitch is odd, so the group's buffer range is 4-byte bounded);
// a group that fits in ldm is read once, a larger one (a row beyond the local store) is streamed three times:
// maxima, sums of exponentials, then the output in tiles.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "ldmsim/kernels/exp_floats.hpp"
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

struct SoftmaxArgs {
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;
  Layout yl;
};

struct RowStats {
  float max = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
};

// Visits the logical elements of rows [r0, r1) that lie in buffer range `tile` of layout l, as
// fn(row, column, buffer_offset, count) runs.
template <typename F>
void each_segment(const Layout& l, std::size_t r0, std::size_t r1, tiling::Range tile, F&& fn) {
  const std::size_t cols = l.shape.c, pitch = l.chw_pitch;
  for (std::size_t r = r0; r < r1; ++r) {
    const std::size_t begin = std::max(tile.begin, r * pitch), end = std::min(tile.end, r * pitch + cols);
    if (begin < end) fn(r, begin - r * pitch, begin, end - begin);
  }
}

void softmax_kernel(Core& core, SoftmaxArgs a) {
  const std::size_t rows = a.xl.shape.n, cols = a.xl.shape.c;
  const std::size_t per_group = a.yl.chw_pitch % 2 == 0 ? 1 : 2;
  const std::size_t groups = (rows + per_group - 1) / per_group;
  if (tiling::worker_index(core) >= groups) return;
  // Tiles (and the host scratch behind them) no larger than a row group needs.
  const std::size_t group_span = per_group * std::max(a.xl.chw_pitch, a.yl.chw_pitch) + 2;
  const std::size_t tile = std::min(tiling::fit_elements(core, 2), tiling::ceil_even(group_span));
  auto xb = core.ldm().alloc<f16>(tile + 2);
  auto yb = core.ldm().alloc<f16>(tile);
  std::vector<float> xs(tile + 2), ys(tile);
  std::array<float, 256> scratch{};  // exponentials of a streamed row, a run at a time
  // Reads x elements `range` (logical positions of row segments) into xs; returns the index of range.begin.
  auto read_x = [&](tiling::Range range) {
    const auto read = tiling::get_range(core, xb, a.x, a.xl.total, range);
    read.handle.wait();
    const std::size_t n = std::min(xb.size(), read.first + range.size() + 1);
    to_floats(xb, 0, n, xs.data());
    return read.first;
  };
  for (std::size_t g = tiling::worker_index(core); g < groups; g += tiling::worker_count(core)) {
    const std::size_t r0 = g * per_group, r1 = std::min(rows, r0 + per_group);
    // The group's output range: its rows' pitches, clipped to the buffer (the last group may own the padding row).
    const tiling::Range out{
        r0 * a.yl.chw_pitch,
        std::min(a.yl.total, (g + 1 == groups ? std::max(r0 + per_group, rows) : r1) * a.yl.chw_pitch)};
    std::array<RowStats, 2> stats{};
    // Statistics: maxima, then sums of exponentials, over x: read once when the rows fit the buffer, else in
    // tiles of the rows' input range per pass.
    const tiling::Range in{r0 * a.xl.chw_pitch, (r1 - 1) * a.xl.chw_pitch + cols};
    const bool resident = in.size() + 2 <= xb.size();
    const std::size_t base = resident ? read_x(in) : 0;
    for (int pass = 0; pass < 2; ++pass) {
      auto visit = [&](tiling::Range t, std::size_t first) {
        each_segment(a.xl, r0, r1, t, [&](std::size_t r, std::size_t, std::size_t at, std::size_t n) {
          RowStats& s = stats[r - r0];
          const float* v = xs.data() + first + (at - t.begin);
          if (pass == 0) {
            for (std::size_t i = 0; i < n; ++i) s.max = std::max(s.max, v[i]);
          } else {  // resident: keep the exponentials in x's place, the output pass only divides
            float* e = resident ? xs.data() + first + (at - t.begin) : scratch.data();
            for (std::size_t done = 0; done < n; done += scratch.size()) {
              const std::size_t m = std::min(scratch.size(), n - done);
              float* run = resident ? e + done : e;
              for (std::size_t i = 0; i < m; ++i) run[i] = v[done + i] - s.max;
              exp_floats(run, run, m);
              for (std::size_t i = 0; i < m; ++i) s.sum += run[i];
            }
          }
        });
        core.compute({.flops = 2 * t.size()});
      };
      if (resident) {
        visit(in, base);
      } else {
        tiling::for_each_tile(in, tile, [&](tiling::Range t) { visit(t, read_x(t)); });
      }
    }
    // Output tiles: y = exp(x - max) / sum at logical positions, zero at padding.
    tiling::for_each_tile(out, tile, [&](tiling::Range t) {
      std::fill(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(t.size()), 0.0f);
      each_segment(a.yl, r0, r1, t, [&](std::size_t r, std::size_t col, std::size_t at, std::size_t n) {
        const std::size_t from = r * a.xl.chw_pitch + col;  // the same elements in x's layout
        const std::size_t first = resident ? base + (from - in.begin) : read_x({from, from + n});
        const RowStats& s = stats[r - r0];
        float* out_row = ys.data() + (at - t.begin);
        if (resident) {
          for (std::size_t i = 0; i < n; ++i) out_row[i] = xs[first + i] / s.sum;
        } else {
          for (std::size_t i = 0; i < n; ++i) out_row[i] = xs[first + i] - s.max;
          exp_floats(out_row, out_row, n);
          for (std::size_t i = 0; i < n; ++i) out_row[i] /= s.sum;
        }
      });
      core.compute({.flops = 3 * t.size()});
      to_halves(ys.data(), t.size(), yb);
      tiling::put_range(core, a.y, yb, t).wait();
    });
  }
}

class SoftmaxOp final : public BoundOp {
 public:
  SoftmaxOp(Shape x, std::size_t axis) : BoundOp({x}, {x}), axis_(axis) {}

  Shape4 view(std::size_t index) const override { return Shape4::matrix_view(tensor_shape(index), axis_); }
  PaddingSpec padding(std::size_t) const override {
    return PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample};
  }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    launch_all(m, label, softmax_kernel,
               SoftmaxArgs{DevicePtr<const f16>(in[0].ptr), in[0].layout(), out[0].ptr, out[0].layout()});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    HostTensor y = in[0];
    const std::size_t cols = y.shape.product(axis_, y.shape.rank());
    for (std::size_t r = 0; r < y.data.size() / cols; ++r) {
      float* row = y.data.data() + r * cols;
      const float mx = *std::max_element(row, row + cols);
      double sum = 0.0;
      for (std::size_t i = 0; i < cols; ++i) sum += std::exp(static_cast<double>(row[i] - mx));
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = static_cast<float>(std::exp(static_cast<double>(row[i] - mx)) / sum);
    }
    return {y};
  }
  OpCost cost() const override {
    const Shape& x = input_shapes()[0];
    return {5 * x.elements(), 0};
  }
  Tolerance tolerance() const override { return {1e-4, 1.0 / 512}; }
  FusionForm fusion_form() const override { return {.kind = FusionForm::Kind::kSoftmax, .axis_begin = axis_}; }

 private:
  std::size_t axis_;
};

std::unique_ptr<BoundOp> bind_softmax(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"axis"});
  const auto rank = static_cast<std::int64_t>(in[0].rank());
  if (rank == 0) reject(name, "the input must have rank >= 1");
  std::int64_t axis = int_attr(attrs, "axis", std::min<std::int64_t>(1, rank - 1), -rank, rank - 1);
  if (axis < 0) axis += rank;
  return std::make_unique<SoftmaxOp>(in[0], static_cast<std::size_t>(axis));
}

}  // namespace

void add_softmax_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("softmax", Arity{1, 1, 1}, bind_softmax));
}

}  // namespace ldmsim::ops
