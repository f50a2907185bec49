// max_pool and avg_pool over NCHW with kernel, stride and pad, max_pool also with dilation (2-D class: planes move
// in pairs, or a zero after every w row). The output is cut into destination tiles over every core of every group; for
// each output row segment of a tile a core gathers only the input window rows it needs (all of them in one read when
// they fit, else row by row in chunks of the free ldm), so a plane of any size works. avg_pool divides by the window
// clipped to the input unless count_include_pad is true.
#include <limits>

#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

struct PoolAttrs {
  std::size_t kh = 2, kw = 2, sh = 2, sw = 2, ph = 0, pw = 0, dh = 1, dw = 1;
  bool include_pad = false;
  bool ceil_mode = false;  ///< output size rounded up: the last window may run past the padded edge (clipped)
  bool is_max = true;
};

struct PoolArgs {
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;
  Layout yl;
  PoolAttrs a;
};

/// The input positions of output index o's window along one axis that lie in [0, extent): lo, lo + d, ... below
/// hi (k taps d apart from o * stride - pad; none when lo == hi).
struct Window {
  std::size_t lo = 0, hi = 0;
  std::size_t taps(std::size_t d) const { return (hi - lo + d - 1) / d; }
};
Window window(std::size_t o, std::size_t stride, std::size_t pad, std::size_t k, std::size_t extent,
              std::size_t d = 1) {
  const std::size_t start = o * stride;  // in padded coordinates: tap i at start + i * d
  const std::size_t first = start >= pad ? 0 : (pad - start + d - 1) / d;
  const std::size_t end = extent + pad <= start ? 0 : std::min(k, (extent + pad - start + d - 1) / d);
  if (first >= end) return {0, 0};
  return {start + first * d - pad, start + (end - 1) * d - pad + 1};
}

/// [lo, hi): the positions the windows of outputs [o0, o1) read along one axis (empty windows, all padding, read
/// none; with dilation a window may be empty while its neighbours are not).
void rows_read(std::size_t o0, std::size_t o1, std::size_t stride, std::size_t pad, std::size_t k, std::size_t extent,
               std::size_t d, std::size_t& lo, std::size_t& hi) {
  lo = extent, hi = 0;
  for (std::size_t o = o0; o < o1; ++o) {
    const Window w = window(o, stride, pad, k, extent, d);
    if (w.lo < w.hi) lo = std::min(lo, w.lo), hi = std::max(hi, w.hi);
  }
  if (lo >= hi) lo = hi = 0;
}

void pool_kernel(Core& core, const PoolArgs& args) {
  const PoolAttrs& a = args.a;
  const std::size_t H = args.xl.shape.h, W = args.xl.shape.w, P = args.yl.shape.h, Q = args.yl.shape.w;
  // Whole output planes per core and per tile when they fit, so no input row is read twice.
  const tiling::Range share = tiling::my_unit_share(core, args.yl.total, args.yl.hw_pitch);
  if (share.empty()) return;
  const std::size_t plane_step = args.yl.hw_pitch % 2 == 0 ? args.yl.hw_pitch : 2 * args.yl.hw_pitch;
  // Tiles of whole planes when a plane fits a tile (no plane's rows read by two tiles), of up to 8192 elements; where
  // the writer's two tiles would leave the staging too little of the free ldm (a 16 KiB store), at most two thirds
  // of it.
  std::size_t tile_unit = plane_step <= 8192 ? plane_step : 2;
  std::size_t tile = std::min(tiling::ceil_even(share.size()), 8192 / tile_unit * tile_unit);
  constexpr std::size_t kAlign = Ldm::kDefaultAlignment, kLeastStaging = 128;  // each ldm buffer starts aligned
  const std::size_t writer_bytes = 2 * ((tile * sizeof(f16) + kAlign - 1) / kAlign * kAlign);
  if (writer_bytes + kLeastStaging > core.ldm().capacity() - core.ldm().used()) {
    const std::size_t max_tile = tiling::fit_elements(core, 3, 8192);
    tile_unit = plane_step <= max_tile ? plane_step : 2;
    tile = std::min(tiling::ceil_even(share.size()), max_tile / tile_unit * tile_unit);
  }
  tiling::TileWriter writer(core, args.y, tile);
  const std::size_t cap = tiling::fit_elements(core, 2, 32768);
  auto staging = core.ldm().alloc<f16>(cap + 2);
  // The rows in ldm as the core computes on them; the host converts them from where the reads put them.
  [[maybe_unused]] const auto block = core.ldm().alloc<f16>(cap);
  // Host floats of the ldm data, grown to what the reads need (not to the ldm buffer's size: every simulated
  // core has its own, and fresh host pages cost more than the pooling).
  std::vector<float> xs, ys(tile), acc;
  const auto floats_of = [&](std::size_t n) {
    if (xs.size() < n) xs.resize(n);
    return xs.data();
  };
  const float init = a.is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
  tiling::for_each_tile(
      share, tile,
      [&](tiling::Range t) {
        std::fill(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(t.size()), 0.0f);
        const std::size_t first = args.yl.logical_at_or_after(t.begin), last = args.yl.logical_at_or_after(t.end);
        // Per plane: the tile's output rows p0..p1 need input rows [lo, hi); when they fit, one read brings them all
        // (each input row read once per tile), else each output row segment gathers its own window.
        for (std::size_t l = first; l < last;) {
          const std::size_t plane = l / (P * Q), plane_end = std::min(last, (plane + 1) * P * Q);
          const std::size_t p0 = (l / Q) % P, p1 = ((plane_end - 1) / Q) % P + 1;
          std::size_t lo = 0, hi = 0;
          rows_read(p0, p1, a.sh, a.ph, a.kh, H, a.dh, lo, hi);
          const std::size_t base = plane * H * W;
          const bool block_fits = (hi - lo) * W <= cap;
          if (block_fits) {
            gather_floats(core, staging, args.x, args.xl, base + lo * W, (hi - lo) * W, floats_of((hi - lo) * W));
          }
          for (; l < plane_end;) {
            const std::size_t p = (l / Q) % P, q0 = l % Q, q1 = std::min(Q, q0 + (plane_end - l));
            const Window rows = window(p, a.sh, a.ph, a.kh, H, a.dh);
            acc.assign(q1 - q0, init);
            // Each output gains its window's values one by one, row by row, in w order (max or sum): per kernel
            // column j (offset off = j * dw), every output q whose input column w = q*sw + off - pw lies in
            // [w_begin, w_end), so the loop over q runs across outputs (it vectorises) and each output still sees
            // its w in order.
            const auto combine_with = [&](const float* row, std::size_t w_begin, std::size_t w_end, auto gain) {
              const std::size_t low = a.pw + w_begin, high = a.pw + w_end;  // bounds of q*sw + off
              for (std::size_t j = 0; j < a.kw; ++j) {
                const std::size_t off = j * a.dw;
                std::size_t qa = low > off ? (low - off + a.sw - 1) / a.sw : 0;
                std::size_t qb = high > off ? (high - off - 1) / a.sw + 1 : 0;
                qa = std::max(qa, q0), qb = std::min(qb, q1);
                if (qa >= qb) continue;
                const float* from = row + (qa * a.sw + off - low);
                float* into = acc.data() + (qa - q0);
                if (a.sw == 1) {
                  for (std::size_t i = 0; i < qb - qa; ++i) into[i] = gain(into[i], from[i]);
                } else {
                  for (std::size_t i = 0; i < qb - qa; ++i) into[i] = gain(into[i], from[i * a.sw]);
                }
              }
            };
            auto combine = [&](const float* row, std::size_t w_begin, std::size_t w_end) {  // row[w - w_begin]
              if (a.is_max) {
                combine_with(row, w_begin, w_end, [](float v, float x) { return std::max(v, x); });
              } else {
                combine_with(row, w_begin, w_end, [](float v, float x) { return v + x; });
              }
            };
            if (block_fits) {
              for (std::size_t h = rows.lo; h < rows.hi; h += a.dh) combine(xs.data() + (h - lo) * W, 0, W);
            } else {  // row by row, in chunks of the columns the segment needs
              std::size_t w_lo = 0, w_hi = 0;
              rows_read(q0, q1, a.sw, a.pw, a.kw, W, a.dw, w_lo, w_hi);
              for (std::size_t h = rows.lo; h < rows.hi; h += a.dh) {
                for (std::size_t c = w_lo; c < w_hi; c += cap) {
                  const std::size_t len = std::min(cap, w_hi - c);
                  gather_floats(core, staging, args.x, args.xl, base + h * W + c, len, floats_of(len));
                  combine(xs.data(), c, c + len);
                }
              }
            }
            float* out = ys.data() + (args.yl.offset_of(l) - t.begin);  // a row segment is contiguous in any layout
            for (std::size_t q = q0; q < q1; ++q) {
              float v = acc[q - q0];
              if (!a.is_max) {
                const Window cols = window(q, a.sw, a.pw, a.kw, W);
                v /= static_cast<float>(a.include_pad ? a.kh * a.kw : rows.taps(1) * cols.taps(1));
              }
              out[q - q0] = v;
            }
            core.compute({.flops = (q1 - q0) * a.kh * a.kw});
            l += q1 - q0;
          }
        }
        to_halves(ys.data(), t.size(), writer.next());
        writer.put(t);
      },
      tile_unit);
  writer.finish();
}

class PoolOp final : public BoundOp {
 public:
  PoolOp(Shape x, Shape y, PoolAttrs a) : BoundOp({x}, {y}), a_(a) {}
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kTwoD, Unit::kPlane, Unit::kRow}; }
  bool reads_any_layout(std::size_t) const override { return true; }  // X is gathered by logical index
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    launch_all(m, label, pool_kernel,
               PoolArgs{DevicePtr<const f16>(in[0].ptr), in[0].layout(), out[0].ptr, out[0].layout(), a_});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& xs = input_shapes()[0];
    const Shape& ys = output_shapes()[0];
    const std::size_t H = xs[2], W = xs[3], P = ys[2], Q = ys[3];
    HostTensor y{ys, std::vector<float>(ys.elements())};
    for (std::size_t plane = 0; plane < xs[0] * xs[1]; ++plane) {
      for (std::size_t p = 0; p < P; ++p) {
        for (std::size_t q = 0; q < Q; ++q) {
          // Window in signed coordinates, clipped explicitly (independent of the kernel's Window helper).
          const long h0 = static_cast<long>(p * a_.sh) - static_cast<long>(a_.ph);
          const long w0 = static_cast<long>(q * a_.sw) - static_cast<long>(a_.pw);
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          std::size_t count = 0;
          for (std::size_t i = 0; i < a_.kh; ++i) {
            const long h = h0 + static_cast<long>(i * a_.dh);
            for (std::size_t j = 0; j < a_.kw; ++j) {
              const long w = w0 + static_cast<long>(j * a_.dw);
              if (h < 0 || w < 0 || h >= static_cast<long>(H) || w >= static_cast<long>(W)) continue;
              const double v =
                  in[0].data[plane * H * W + static_cast<std::size_t>(h) * W + static_cast<std::size_t>(w)];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          }
          const double avg = sum / static_cast<double>(a_.include_pad ? a_.kh * a_.kw : count);
          y.data[plane * P * Q + p * Q + q] = static_cast<float>(a_.is_max ? best : avg);
        }
      }
    }
    return {y};
  }
  OpCost cost() const override { return {output_shapes()[0].elements() * a_.kh * a_.kw, 0}; }
  Tolerance tolerance() const override { return {1e-3, 1.0 / 1024}; }
  SplitGeometry split_geometry() const override {
    SplitGeometry s;
    s.window = true;
    s.kernel = {a_.kh, a_.kw};
    s.stride = {a_.sh, a_.sw};
    s.pad_before = s.pad_after = {a_.ph, a_.pw};
    s.dilation = {a_.dh, a_.dw};
    return s;
  }

 private:
  PoolAttrs a_;
};

template <bool kMax>
std::unique_ptr<BoundOp> bind_pool(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, kMax ? std::initializer_list<std::string_view>{"kernel", "stride", "pad", "dilation", "ceil_mode"}
                          : std::initializer_list<std::string_view>{"kernel", "stride", "pad", "count_include_pad",
                                                                    "ceil_mode"});
  PoolAttrs a;
  a.is_max = kMax;
  std::tie(a.kh, a.kw) = pair_attr(attrs, "kernel", 2, 1);
  std::tie(a.sh, a.sw) = attrs.has("stride") ? pair_attr(attrs, "stride", 1, 1) : std::make_pair(a.kh, a.kw);
  std::tie(a.ph, a.pw) = pair_attr(attrs, "pad", 0, 0);
  std::tie(a.dh, a.dw) = pair_attr(attrs, "dilation", 1, 1);
  if (const auto v = attrs.find("count_include_pad")) a.include_pad = v->boolean();
  if (const auto v = attrs.find("ceil_mode")) a.ceil_mode = v->boolean();
  if (a.ceil_mode && a.include_pad) {
    reject(name, "ceil_mode with count_include_pad is not supported (the divisor of a window past the edge)");
  }
  // The window's reach: (k - 1) * d + 1 positions (attributes are at most 2^24, so it stays below 2^48).
  const std::uint64_t reach_h = (a.kh - 1) * a.dh + 1, reach_w = (a.kw - 1) * a.dw + 1;
  if (a.ph >= reach_h || a.pw >= reach_w) {
    reject(name, fmt::format("attribute 'pad' [{}, {}] must be smaller than the kernel's reach [{}, {}]", a.ph, a.pw,
                             reach_h, reach_w));
  }
  const Shape& x = in[0];
  if (x.rank() != 4) reject(name, fmt::format("the input must be 4-D NCHW, got {}", x.str()));
  // Attributes are at most 2^24 and dims at most 2^48, so these sums cannot wrap.
  const std::uint64_t hp = x[2] + 2 * a.ph, wp = x[3] + 2 * a.pw;
  if (hp < reach_h || wp < reach_w) {
    const std::string dilated =
        a.dh * a.dw == 1 ? "" : fmt::format(" with dilation {}x{} (reach {}x{})", a.dh, a.dw, reach_h, reach_w);
    reject(name, fmt::format("kernel {}x{}{} is larger than the padded input {}x{}", a.kh, a.kw, dilated, hp, wp));
  }
  // ceil_mode (ONNX, PyTorch): round the window count up, but a last window must start inside the input or its
  // leading pad; it is clipped to the input like every other window.
  const auto outputs = [&](std::uint64_t padded, std::uint64_t k, std::size_t s, std::uint64_t extent, std::size_t p) {
    std::uint64_t n = (padded - k) / s + 1;
    if (a.ceil_mode && (padded - k) % s != 0 && n * s < extent + p) ++n;
    return n;
  };
  return std::make_unique<PoolOp>(
      x, Shape{x[0], x[1], outputs(hp, reach_h, a.sh, x[2], a.ph), outputs(wp, reach_w, a.sw, x[3], a.pw)}, a);
}

}  // namespace

void add_pool_kinds(OperatorRegistry& registry) {
  registry.add(
      std::make_unique<FunctionKind>("max_pool", Arity{1, 1, 1}, bind_pool<true>, OperatorTraits{SplitRule::kPool}));
  registry.add(
      std::make_unique<FunctionKind>("avg_pool", Arity{1, 1, 1}, bind_pool<false>, OperatorTraits{SplitRule::kPool}));
}

}  // namespace ldmsim::ops
