// fc: Y[n,k] = sum_m X[n,m] W[k,m] + b[k], X flattened to n x (c*h*w). 2-D class on X, W and Y; b is 1-D.
// Work is dealt by pairs of samples; each core streams W in pairs of rows, fetching the next pair while
// computing the current one.
#include "ldmsim/kernels/operators.hpp"
#include "op_common.hpp"
#include "tiles.hpp"

namespace ldmsim::kernels {

namespace {

// Gathers the m logical elements of sample s of a unit buffer into floats (one bulk conversion when the
// sample's elements are contiguous, as under every fc plan of the method).
void gather(const Layout& l, const LdmSpan<f16>& buf, std::size_t base, float* out) {
  if (l.w_pitch == l.shape.w && l.hw_pitch == l.shape.hw()) {
    halves_to_floats(buf.subspan(base, l.shape.chw()).span(), std::span<float>(out, l.shape.chw()));
    return;
  }
  std::size_t i = 0;
  for (std::size_t c = 0; c < l.shape.c; ++c)
    for (std::size_t h = 0; h < l.shape.h; ++h)
      for (std::size_t w = 0; w < l.shape.w; ++w)
        out[i++] = static_cast<float>(buf[base + c * l.hw_pitch + h * l.w_pitch + w]);
}

void fc_kernel(Core& core, DevicePtr<f16> x, Layout xl, DevicePtr<f16> wt, Layout wl, DevicePtr<f16> b, Layout bl,
               bool has_bias, DevicePtr<f16> y, Layout yl) {
  const detail::Units xu = detail::samples(x, xl), wu = detail::samples(wt, wl), yu = detail::samples(y, yl);
  const std::size_t groups = (xu.count + 1) / 2;
  if (detail::worker(core) >= groups) return;
  const std::size_t m = xl.shape.chw(), kout = wl.shape.n;
  auto xb = core.ldm().alloc<f16>(2 * xu.pitch);
  std::array<LdmSpan<f16>, 2> wb = {core.ldm().alloc<f16>(2 * wu.pitch), core.ldm().alloc<f16>(2 * wu.pitch)};
  auto yb = core.ldm().alloc<f16>(2 * yu.pitch);
  std::vector<float> bias(kout, 0.0f), xs(2 * m), ws(2 * m), acc(2 * kout);
  if (has_bias) {
    auto bb = core.ldm().alloc<f16>(bl.total);
    core.get(bb, DevicePtr<const f16>(b)).wait();
    for (std::size_t k = 0; k < kout; ++k) bias[k] = static_cast<float>(bb[k]);
    core.ldm().free(bb);
  }
  const std::size_t wgroups = (kout + 1) / 2;
  for (std::size_t g = detail::worker(core); g < groups; g += detail::workers(core)) {
    const std::size_t first = 2 * g, nk = std::min<std::size_t>(2, xu.count - first);
    detail::wait_all(detail::move_units<true>(core, xu, xb, first, nk));
    for (std::size_t s = 0; s < nk; ++s) gather(xl, xb, s * xu.pitch, xs.data() + s * m);
    auto pending = detail::move_units<true>(core, wu, wb[0], 0, std::min<std::size_t>(2, kout));
    for (std::size_t j = 0; j < wgroups; ++j) {
      const std::size_t k0 = 2 * j, kk = std::min<std::size_t>(2, kout - k0);
      detail::wait_all(pending);
      if (j + 1 < wgroups) {
        pending = detail::move_units<true>(core, wu, wb[(j + 1) % 2], k0 + 2, std::min<std::size_t>(2, kout - k0 - 2));
      }
      for (std::size_t r = 0; r < kk; ++r) gather(wl, wb[j % 2], r * wu.pitch, ws.data() + r * m);
      for (std::size_t s = 0; s < nk; ++s)
        for (std::size_t r = 0; r < kk; ++r) {
          float sum = 0.0f;
          const float* xr = xs.data() + s * m;
          const float* wr = ws.data() + r * m;
          for (std::size_t i = 0; i < m; ++i) sum += xr[i] * wr[i];
          acc[s * kout + k0 + r] = sum + bias[k0 + r];
        }
      core.compute({.flops = 2 * nk * kk * m});
    }
    std::fill(yb.begin(), yb.end(), f16{});
    for (std::size_t s = 0; s < nk; ++s) {
      floats_to_halves(std::span<const float>(acc.data() + s * kout, kout), yb.subspan(s * yu.pitch, kout).span());
    }
    detail::wait_all(detail::move_units<false>(core, yu, yb, first, nk));
  }
}

}  // namespace

Operator fc_operator() {
  Operator op;
  op.name = "fc";
  op.min_inputs = 2;
  op.max_inputs = 3;
  op.infer = [](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    detail::check_attrs(attrs, {});
    const Shape4& x = in.at(0);
    const Shape4& w = in.at(1);
    if (w.chw() != x.chw()) {
      throw ConfigError(fmt::format("fc: W {} must be k x {} (c*h*w of X {})", w.str(), x.chw(), x.str()));
    }
    if (in.size() == 3 && (in[2].rank != 1 || in[2].n != w.n)) {
      throw ConfigError(fmt::format("fc: bias {} must be [{}]", in[2].str(), w.n));
    }
    return std::vector<Shape4>{Shape4::from_dims({x.n, w.n})};
  };
  op.padding = [](std::size_t i) {
    return i == 2 ? PaddingSpec{PaddingClass::kOneD} : PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample};
  };
  op.run = [](Machine& mach, const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out,
              const nlohmann::json&, const std::string& label) {
    const bool bias = in.size() == 3;
    const DeviceTensor& b = bias ? in[2] : in[0];
    detail::launch_all(mach, label, fc_kernel, in[0].ptr, in[0].layout(), in[1].ptr, in[1].layout(), b.ptr, b.layout(),
                       bias, out[0].ptr, out[0].layout());
  };
  op.reference = [](const std::vector<HostTensor>& in, const nlohmann::json&) {
    const std::size_t n = in[0].shape.n, m = in[0].shape.chw(), k = in[1].shape.n;
    HostTensor y{Shape4::from_dims({n, k}), std::vector<float>(n * k)};
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        float s = 0.0f;
        for (std::size_t t = 0; t < m; ++t) s += in[0].data[i * m + t] * in[1].data[j * m + t];
        y.data[i * k + j] = s + (in.size() == 3 ? in[2].data[j] : 0.0f);
      }
    return std::vector<HostTensor>{y};
  };
  op.cost = [](const std::vector<Shape4>& in, const nlohmann::json&) {
    return OpCost{2 * in[0].n * in[0].chw() * in[1].n, 2 * (2 * in[0].chw() + 4 * in[0].chw() + 2 * in[1].n)};
  };
  op.abs_tolerance = 2e-3;
  op.rel_tolerance = 1.0 / 512;
  return op;
}

}  // namespace ldmsim::kernels
