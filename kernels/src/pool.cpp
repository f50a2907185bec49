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

// Pools one plane: in at xbuf[xo + h*xl.w_pitch + w], out at ybuf[yo + oh*yl.w_pitch + ow].
template <typename In, typename Out>
void pool_plane(const In& xb, std::size_t xo, const Layout& xl, Out& yb, std::size_t yo, const Layout& yl,
                const PoolAttrs& a, bool is_max) {
  for (std::size_t oh = 0; oh < yl.shape.h; ++oh)
    for (std::size_t ow = 0; ow < yl.shape.w; ++ow) {
      const long h0 = static_cast<long>(oh * a.sh) - static_cast<long>(a.ph);
      const long w0 = static_cast<long>(ow * a.sw) - static_cast<long>(a.pw);
      float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
      std::size_t count = 0;
      for (long h = std::max(h0, 0L); h < std::min(h0 + static_cast<long>(a.kh), static_cast<long>(xl.shape.h)); ++h)
        for (long w = std::max(w0, 0L); w < std::min(w0 + static_cast<long>(a.kw), static_cast<long>(xl.shape.w));
             ++w) {
          const float v =
              static_cast<float>(xb[xo + static_cast<std::size_t>(h) * xl.w_pitch + static_cast<std::size_t>(w)]);
          acc = is_max ? std::max(acc, v) : acc + v;
          ++count;
        }
      if (!is_max) acc /= static_cast<float>(a.include_pad ? a.kh * a.kw : count);
      yb[yo + oh * yl.w_pitch + ow] = f16(acc);
    }
}

void pool_kernel(Core& core, DevicePtr<f16> x, Layout xl, DevicePtr<f16> y, Layout yl, PoolAttrs a, bool is_max) {
  const detail::Units xu = detail::planes(x, xl), yu = detail::planes(y, yl);
  const std::size_t groups = (xu.count + 1) / 2;
  if (detail::worker(core) >= groups) return;
  auto xb = core.ldm().alloc<f16>(2 * xu.pitch);
  auto yb = core.ldm().alloc<f16>(2 * yu.pitch);
  for (std::size_t g = detail::worker(core); g < groups; g += detail::workers(core)) {
    const std::size_t first = 2 * g, k = std::min<std::size_t>(2, xu.count - first);
    detail::wait_all(detail::move_units<true>(core, xu, xb, first, k));
    std::fill(yb.begin(), yb.end(), f16{});
    for (std::size_t s = 0; s < k; ++s) pool_plane(xb, s * xu.pitch, xl, yb, s * yu.pitch, yl, a, is_max);
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
      std::vector<float> plane(in[0].data.begin() + static_cast<std::ptrdiff_t>(p * xl.hw_pitch),
                               in[0].data.begin() + static_cast<std::ptrdiff_t>((p + 1) * xl.hw_pitch));
      struct Sink {
        float* out;
        struct Ref {
          float* at;
          Ref& operator=(f16 v) {
            *at = static_cast<float>(v);
            return *this;
          }
        };
        Ref operator[](std::size_t i) { return Ref{out + i}; }
      } sink{y.data.data() + p * yl.hw_pitch};
      pool_plane(plane, 0, xl, sink, 0, yl, a, is_max);
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
