// fc: Y[n, k] = sum_m X[n, m] W[k, m] + b[k], X flattened to n x (c*h*w); X, W and Y are 2-D class (samples),
// b is 1-D. Work goes to every core of every group, so a batch of 1 still spreads its k outputs over all cores.
// When Y's rows start at even elements (k even, or the add-a-column plan), the cores form a grid of sample
// groups x output ranges chosen to minimise the bytes read (each W row is read once per sample group, each X row
// once per output range); otherwise the output is cut into destination tiles. Dot products run over chunks of
// m that fit ldm: each chunk of the X rows is gathered once, then each W row chunk, used for all of them.
#include <algorithm>

#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

struct FcArgs {
  DevicePtr<const f16> x, w, b;
  Layout xl, wl, bl, yl;
  bool has_bias = false;
  std::size_t m = 0, k = 0;
  DevicePtr<f16> y;
};

void fc_kernel(Core& core, const FcArgs& a) {
  const tiling::Range share = tiling::my_share(core, a.yl.total);
  if (share.empty()) return;
  const std::size_t n = a.yl.shape.n;
  // Budget: Y tile, the tile's X row chunks (at most `rows` samples), two W row chunks and a gather buffer.
  const std::size_t tile = std::min<std::size_t>(tiling::ceil_even(share.size()), 1024);
  const std::size_t rows = std::min(n, tile / std::max<std::size_t>(a.k, 1) + 2);
  auto yb = core.ldm().alloc<f16>(tile);
  std::vector<float> bias(a.k, 0.0f);
  if (a.has_bias) {
    auto bb = core.ldm().alloc<f16>(std::max<std::size_t>(a.bl.total, 2));
    core.get(bb.first(a.bl.total), a.b).wait();
    for (std::size_t j = 0; j < a.k; ++j) bias[j] = static_cast<float>(bb[j]);
    core.ldm().free(bb);
  }
  const std::size_t chunk =
      std::min(tiling::ceil_even(a.m), tiling::fit_elements(core, rows + 3, 8192, 0));  // rows of X, 2 of W, 1 gather
  auto xb = core.ldm().alloc<f16>(rows * chunk);
  auto wb = core.ldm().alloc<f16>(chunk);
  auto staging = core.ldm().alloc<f16>(chunk + 2);
  std::vector<float> xs(rows * chunk), ws(chunk), acc(tile), ys(tile);
  tiling::for_each_tile(share, tile, [&](tiling::Range t) {
    const std::size_t first = a.yl.logical_at_or_after(t.begin);
    const std::size_t last = a.yl.logical_at_or_after(t.end);
    std::fill(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(t.size()), 0.0f);
    if (first < last) {
      const std::size_t s0 = first / a.k, s1 = (last - 1) / a.k + 1;
      // The outputs j some sample of this tile needs.
      const std::size_t from = first - s0 * a.k, to = last - (s1 - 1) * a.k;
      auto needed = [&](std::size_t j) {
        return s1 - s0 == 1 ? j >= from && j < to : s1 - s0 > 2 || j >= from || j < to;
      };
      for (std::size_t l = first; l < last; ++l) acc[l - first] = bias[l % a.k];
      for (std::size_t c0 = 0; c0 < a.m; c0 += chunk) {
        const std::size_t len = std::min(chunk, a.m - c0);
        for (std::size_t s = s0; s < s1; ++s) {
          tiling::gather(core, staging, a.x, a.xl, s * a.m + c0, len, xb.data() + (s - s0) * chunk);
        }
        to_floats(xb, 0, (s1 - s0) * chunk, xs.data());
        for (std::size_t j = 0; j < a.k; ++j) {
          if (!needed(j)) continue;
          tiling::gather(core, staging, a.w, a.wl, j * a.m + c0, len, wb.data());
          to_floats(wb, 0, len, ws.data());
          for (std::size_t s = s0; s < s1; ++s) {
            const std::size_t l = s * a.k + j;
            if (l < first || l >= last) continue;
            const float* xr = xs.data() + (s - s0) * chunk;
            float sum = 0.0f;
            for (std::size_t i = 0; i < len; ++i) sum += xr[i] * ws[i];
            acc[l - first] += sum;
          }
          core.compute({.flops = 2 * len * (s1 - s0)});
        }
      }
      for_each_run(a.yl, first, last, [&](std::size_t l, std::size_t offset, std::size_t count) {
        std::copy_n(acc.begin() + static_cast<std::ptrdiff_t>(l - first), count,
                    ys.begin() + static_cast<std::ptrdiff_t>(offset - t.begin));
      });
    }
    to_halves(ys.data(), t.size(), yb);
    tiling::put_range(core, a.y, yb, t).wait();
  });
}

/// Accumulates acc[s][j - j0] += X[s, :] . W[j, :] for samples [s0, s1) and outputs [j0, j1), over chunks of m.
struct DotBuffers {
  LdmSpan<f16> xb, wb, staging;
  std::size_t chunk = 0;
  std::vector<float> xs, ws;
};
void accumulate(Core& core, const FcArgs& a, DotBuffers& buf, std::size_t s0, std::size_t s1, std::size_t j0,
                std::size_t j1, std::vector<float>& acc) {
  const std::size_t width = j1 - j0;
  for (std::size_t c0 = 0; c0 < a.m; c0 += buf.chunk) {
    const std::size_t len = std::min(buf.chunk, a.m - c0);
    for (std::size_t s = s0; s < s1; ++s) {
      tiling::gather(core, buf.staging, a.x, a.xl, s * a.m + c0, len, buf.xb.data() + (s - s0) * buf.chunk);
    }
    to_floats(buf.xb, 0, (s1 - s0) * buf.chunk, buf.xs.data());
    for (std::size_t j = j0; j < j1; ++j) {
      tiling::gather(core, buf.staging, a.w, a.wl, j * a.m + c0, len, buf.wb.data());
      to_floats(buf.wb, 0, len, buf.ws.data());
      for (std::size_t s = s0; s < s1; ++s) {
        const float* xr = buf.xs.data() + (s - s0) * buf.chunk;
        float sum = 0.0f;
        for (std::size_t i = 0; i < len; ++i) sum += xr[i] * buf.ws[i];
        acc[(s - s0) * width + (j - j0)] += sum;
      }
    }
    core.compute({.flops = 2 * len * (s1 - s0) * width});
  }
}

/// The grid: `sample_groups` x `output_groups` cores (the rest idle).
struct FcGrid {
  std::size_t sample_groups = 1, output_groups = 1;
};

/// Minimises the bytes read, X * output_groups + W * sample_groups, over grids that fit the cores (output ranges
/// at least 2 wide, so their bounds stay even).
FcGrid choose_grid(std::size_t workers, std::size_t n, std::size_t k, std::size_t m) {
  FcGrid best{};
  double best_bytes = -1;
  for (std::size_t ps = 1; ps <= std::min(n, workers); ++ps) {
    const std::size_t pj = std::max<std::size_t>(1, std::min(workers / ps, (k + 1) / 2));
    const double bytes =
        static_cast<double>(n * m) * static_cast<double>(pj) + static_cast<double>(k * m) * static_cast<double>(ps);
    if (best_bytes < 0 || bytes < best_bytes) best = {ps, pj}, best_bytes = bytes;
  }
  return best;
}

void fc_grid_kernel(Core& core, const FcArgs& a) {
  const std::size_t n = a.yl.shape.n;
  const FcGrid grid = choose_grid(tiling::worker_count(core), n, a.k, a.m);
  const std::size_t me = tiling::worker_index(core);
  if (me >= grid.sample_groups * grid.output_groups) return;
  // Sample groups are cut anywhere (rows are independent); output ranges at even j.
  const std::size_t per = n / grid.sample_groups, extra = n % grid.sample_groups, g = me / grid.output_groups;
  const std::size_t s0 = g * per + std::min(g, extra), s1 = s0 + per + (g < extra ? 1 : 0);
  const tiling::Range outputs = tiling::split_even(a.k, grid.output_groups, me % grid.output_groups);
  if (s0 >= s1 || outputs.empty()) return;
  std::vector<float> bias(outputs.size(), 0.0f);
  if (a.has_bias) {
    auto bb = core.ldm().alloc<f16>(outputs.size() + 2);
    const auto read = tiling::get_range(core, bb, a.b, a.bl.total, outputs);
    read.handle.wait();
    for (std::size_t j = 0; j < outputs.size(); ++j) bias[j] = static_cast<float>(bb[read.first + j]);
    core.ldm().free(bb);
  }
  // Rows of Y are written from `row_len` elements: the range, plus the padding column after the last output.
  const std::size_t row_len = std::min(a.yl.chw_pitch, tiling::ceil_even(outputs.end)) - outputs.begin;
  const std::size_t rows = std::min<std::size_t>(s1 - s0, 16);
  auto yb = core.ldm().alloc<f16>(rows * row_len);
  DotBuffers buf;
  buf.chunk = std::min(tiling::ceil_even(a.m), tiling::fit_elements(core, rows + 3, 8192, 0));
  buf.xb = core.ldm().alloc<f16>(rows * buf.chunk);
  buf.wb = core.ldm().alloc<f16>(buf.chunk);
  buf.staging = core.ldm().alloc<f16>(buf.chunk + 2);
  buf.xs.resize(rows * buf.chunk);
  buf.ws.resize(buf.chunk);
  std::vector<float> acc, ys(rows * row_len, 0.0f);
  std::vector<DmaHandle> puts;
  for (std::size_t r0 = s0; r0 < s1; r0 += rows) {
    const std::size_t r1 = std::min(s1, r0 + rows);
    for (DmaHandle& h : puts) h.wait();  // yb is reused
    puts.clear();
    acc.assign((r1 - r0) * outputs.size(), 0.0f);
    accumulate(core, a, buf, r0, r1, outputs.begin, outputs.end, acc);
    for (std::size_t s = r0; s < r1; ++s) {
      float* y = ys.data() + (s - r0) * row_len;
      for (std::size_t j = 0; j < outputs.size(); ++j) y[j] = acc[(s - r0) * outputs.size() + j] + bias[j];
      auto out = yb.subspan((s - r0) * row_len, row_len);
      to_halves(y, row_len, out);
      puts.push_back(core.put(a.y + s * a.yl.chw_pitch + outputs.begin, LdmSpan<const f16>(out)));
    }
  }
  for (DmaHandle& h : puts) h.wait();
}

class FcOp final : public BoundOp {
 public:
  FcOp(std::vector<Shape> in, Shape out) : BoundOp(std::move(in), {out}) {}
  Shape4 view(std::size_t index) const override {
    // X is a matrix of samples; W [k, m], b [k] and Y [n, k] as they are.
    return index == 0 ? Shape4::view_of(input_shapes()[0]) : Shape4::view_of(tensor_shape(index));
  }
  PaddingSpec padding(std::size_t i) const override {
    return i == 2 && input_shapes().size() == 3 ? PaddingSpec{PaddingClass::kOneD}
                                                : PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample};
  }
  void run(Machine& mach, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const bool bias = in.size() == 3;
    const DeviceTensor& b = bias ? in[2] : in[0];
    const bool grid = out[0].layout().chw_pitch % 2 == 0;  // every row of Y starts at an even element
    launch_all(mach, label, grid ? fc_grid_kernel : fc_kernel,
               FcArgs{DevicePtr<const f16>(in[0].ptr), DevicePtr<const f16>(in[1].ptr), DevicePtr<const f16>(b.ptr),
                      in[0].layout(), in[1].layout(), b.layout(), out[0].layout(), bias, m(), k(), out[0].ptr});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const std::size_t n = output_shapes()[0][0], mm = m(), kk = k();
    HostTensor y{output_shapes()[0], std::vector<float>(n * kk)};
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < kk; ++j) {
        double s = in.size() == 3 ? in[2].data[j] : 0.0;
        for (std::size_t t = 0; t < mm; ++t) s += static_cast<double>(in[0].data[i * mm + t]) * in[1].data[j * mm + t];
        y.data[i * kk + j] = static_cast<float>(s);
      }
    }
    return {y};
  }
  OpCost cost() const override { return {2 * output_shapes()[0][0] * m() * k(), 0}; }
  Tolerance tolerance() const override { return {2e-3, 1.0 / 512}; }

 private:
  std::size_t m() const { return input_shapes()[1][1]; }
  std::size_t k() const { return input_shapes()[1][0]; }
};

std::unique_ptr<BoundOp> bind_fc(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {});
  const Shape& x = in[0];
  const Shape& w = in[1];
  if (x.rank() < 1 || x.rank() > 4) reject(name, fmt::format("X {} must have 1 to 4 dims (NCHW)", x.str()));
  const std::uint64_t chw = x.product(1, x.rank());
  if (w.rank() != 2 || w[1] != chw) {
    reject(name, fmt::format("W {} must be [k, {}] (c*h*w of X {})", w.str(), chw, x.str()));
  }
  if (in.size() == 3 && !(in[2] == Shape{w[0]})) {
    reject(name, fmt::format("bias {} must be [{}]", in[2].str(), w[0]));
  }
  return std::make_unique<FcOp>(std::vector<Shape>(in.begin(), in.end()), Shape{x[0], w[0]});
}

}  // namespace

void add_fc_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("fc", Arity{2, 3, 1}, bind_fc));
}

}  // namespace ldmsim::ops
