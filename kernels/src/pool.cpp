// max_pool and avg_pool over NCHW with kernel, stride and pad: 2-D class. Channel planes move in pairs when
// h*w is odd (a zero plane makes the last pair legal), or the planner puts a zero after every w row.
// avg_pool divides by the window clipped to the input unless count_include_pad is true.
#include <limits>

#include "ldmsim/kernels/operators.hpp"
#include "op_common.hpp"
#include "tiles.hpp"

namespace ldmsim::kernels {

namespace {

struct PoolAttrs {
  std::size_t kh = 2, kw = 2, sh = 2, sw = 2, ph = 0, pw = 0;
  bool include_pad = false;
};

std::pair<std::size_t, std::size_t> pair_attr(const nlohmann::json& attrs, const char* key, std::size_t fallback,
                                              long min_value) {
  if (!attrs.is_object() || !attrs.contains(key)) return {fallback, fallback};
  const auto& v = attrs.at(key);
  if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer() &&
      v[0].get<long>() >= min_value && v[1].get<long>() >= min_value) {
    return {v[0].get<std::size_t>(), v[1].get<std::size_t>()};
  }
  const auto one = static_cast<std::size_t>(detail::attr_int(attrs, key, 0, min_value));
  return {one, one};
}

PoolAttrs parse(const nlohmann::json& attrs) {
  detail::check_attrs(attrs, {"kernel", "stride", "pad", "count_include_pad"});
  PoolAttrs a;
  std::tie(a.kh, a.kw) = pair_attr(attrs, "kernel", 2, 1);
  std::tie(a.sh, a.sw) = pair_attr(attrs, "stride", a.kh, 1);
  if (!(attrs.is_object() && attrs.contains("stride"))) std::tie(a.sh, a.sw) = std::make_pair(a.kh, a.kw);
  std::tie(a.ph, a.pw) = pair_attr(attrs, "pad", 0, 0);
  if (attrs.is_object() && attrs.contains("count_include_pad")) {
    if (!attrs["count_include_pad"].is_boolean()) throw ConfigError("attribute 'count_include_pad' must be a boolean");
    a.include_pad = attrs["count_include_pad"].get<bool>();
  }
  if (a.ph >= a.kh || a.pw >= a.kw) throw ConfigError("attribute 'pad' must be smaller than the kernel");
  return a;
}

Shape4 out_shape(const Shape4& x, const PoolAttrs& a) {
  detail::require_rank4(x, "pool input");
  if (x.h + 2 * a.ph < a.kh || x.w + 2 * a.pw < a.kw) {
    throw ConfigError(fmt::format("pool kernel {}x{} is larger than the padded input {}", a.kh, a.kw, x.str()));
  }
  return Shape4{x.n, x.c, (x.h + 2 * a.ph - a.kh) / a.sh + 1, (x.w + 2 * a.pw - a.kw) / a.sw + 1};
}

// Pools one plane of floats: in at x[h * xl.w_pitch + w], out at y[oh * yl.w_pitch + ow].
void pool_plane(const float* x, const Layout& xl, float* y, const Layout& yl, const PoolAttrs& a, bool is_max) {
  for (std::size_t oh = 0; oh < yl.shape.h; ++oh)
    for (std::size_t ow = 0; ow < yl.shape.w; ++ow) {
      const long h0 = static_cast<long>(oh * a.sh) - static_cast<long>(a.ph);
      const long w0 = static_cast<long>(ow * a.sw) - static_cast<long>(a.pw);
      const auto h_lo = static_cast<std::size_t>(std::max(h0, 0L));
      const auto h_hi = static_cast<std::size_t>(std::min(h0 + static_cast<long>(a.kh), static_cast<long>(xl.shape.h)));
      const auto w_lo = static_cast<std::size_t>(std::max(w0, 0L));
      const auto w_hi = static_cast<std::size_t>(std::min(w0 + static_cast<long>(a.kw), static_cast<long>(xl.shape.w)));
      float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
      for (std::size_t h = h_lo; h < h_hi; ++h) {
        const float* row = x + h * xl.w_pitch;
        for (std::size_t w = w_lo; w < w_hi; ++w) acc = is_max ? std::max(acc, row[w]) : acc + row[w];
      }
      if (!is_max) acc /= static_cast<float>(a.include_pad ? a.kh * a.kw : (h_hi - h_lo) * (w_hi - w_lo));
      y[oh * yl.w_pitch + ow] = acc;
    }
}

// Planes move in pairs; each pair is converted to floats in bulk, pooled, and converted back in bulk (padding
// positions of the output stay zero).
void pool_kernel(Core& core, DevicePtr<f16> x, Layout xl, DevicePtr<f16> y, Layout yl, PoolAttrs a, bool is_max) {
  const detail::Units xu = detail::planes(x, xl), yu = detail::planes(y, yl);
  const std::size_t groups = (xu.count + 1) / 2;
  if (detail::worker(core) >= groups) return;
  auto xb = core.ldm().alloc<f16>(2 * xu.pitch);
  auto yb = core.ldm().alloc<f16>(2 * yu.pitch);
  std::vector<float> xs(xb.size()), ys(yb.size());
  for (std::size_t g = detail::worker(core); g < groups; g += detail::workers(core)) {
    const std::size_t first = 2 * g, k = std::min<std::size_t>(2, xu.count - first);
    detail::wait_all(detail::move_units<true>(core, xu, xb, first, k));
    halves_to_floats(xb.first(k * xu.pitch).span(), std::span<float>(xs.data(), k * xu.pitch));
    std::fill(ys.begin(), ys.end(), 0.0f);
    for (std::size_t s = 0; s < k; ++s)
      pool_plane(xs.data() + s * xu.pitch, xl, ys.data() + s * yu.pitch, yl, a, is_max);
    floats_to_halves(ys, yb.span());
    core.compute({.flops = k * yl.shape.hw() * a.kh * a.kw});
    detail::wait_all(detail::move_units<false>(core, yu, yb, first, k));
  }
}

Operator pool(const char* name, bool is_max) {
  Operator op;
  op.name = name;
  op.infer = [](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    return std::vector<Shape4>{out_shape(in.at(0), parse(attrs))};
  };
  op.padding = [](std::size_t) { return PaddingSpec{PaddingClass::kTwoD, Unit::kPlane, Unit::kRow}; };
  op.run = [is_max](Machine& m, const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out,
                    const nlohmann::json& attrs, const std::string& label) {
    detail::launch_all(m, label, pool_kernel, in[0].ptr, in[0].layout(), out[0].ptr, out[0].layout(), parse(attrs),
                       is_max);
  };
  op.reference = [is_max](const std::vector<HostTensor>& in, const nlohmann::json& attrs) {
    const PoolAttrs a = parse(attrs);
    HostTensor y{out_shape(in[0].shape, a), {}};
    y.data.resize(y.shape.elements());
    const Layout xl = Layout::natural(in[0].shape), yl = Layout::natural(y.shape);
    for (std::size_t p = 0; p < in[0].shape.n * in[0].shape.c; ++p) {
      pool_plane(in[0].data.data() + p * xl.hw_pitch, xl, y.data.data() + p * yl.hw_pitch, yl, a, is_max);
    }
    return std::vector<HostTensor>{y};
  };
  op.cost = [](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    const PoolAttrs a = parse(attrs);
    const Shape4 o = out_shape(in[0], a);
    return OpCost{o.elements() * a.kh * a.kw, 4 * (in[0].hw() + o.hw()) + 8};
  };
  op.abs_tolerance = 1e-3;
  op.rel_tolerance = 1.0 / 1024;
  return op;
}

}  // namespace

Operator max_pool_operator() {
  return pool("max_pool", true);
}
Operator avg_pool_operator() {
  return pool("avg_pool", false);
}

}  // namespace ldmsim::kernels
