// spatialbn inference: y = (x - mean[c]) * scale[c] / sqrt(var[c] + epsilon) + bias[c]. 2-D class on the
// channel planes of X and Y (a zero plane, or a zero after every h*w); the four [C] parameters are 1-D.
#include <cmath>

#include "ldmsim/kernels/operators.hpp"
#include "op_common.hpp"
#include "tiles.hpp"

namespace ldmsim::kernels {

namespace {

struct BnParams {
  DevicePtr<f16> scale, bias, mean, var;
  Layout layout;  // of each [C] parameter (they share one plan)
};

void bn_kernel(Core& core, DevicePtr<f16> x, Layout xl, DevicePtr<f16> y, Layout yl, BnParams p, float eps) {
  const detail::Units xu = detail::planes(x, xl), yu = detail::planes(y, yl);
  const std::size_t groups = (xu.count + 1) / 2, channels = xl.shape.c;
  if (detail::worker(core) >= groups) return;
  std::vector<float> a(channels), b(channels);
  {
    auto buf = core.ldm().alloc<f16>(4 * p.layout.total);
    std::array<DmaHandle, 4> h;
    const DevicePtr<f16> src[4] = {p.scale, p.bias, p.mean, p.var};
    for (std::size_t i = 0; i < 4; ++i) {
      h[i] = core.get(buf.subspan(i * p.layout.total, p.layout.total), DevicePtr<const f16>(src[i]));
    }
    for (auto& e : h) e.wait();
    for (std::size_t c = 0; c < channels; ++c) {
      const float inv = 1.0f / std::sqrt(static_cast<float>(buf[3 * p.layout.total + c]) + eps);
      a[c] = static_cast<float>(buf[c]) * inv;
      b[c] = static_cast<float>(buf[p.layout.total + c]) - static_cast<float>(buf[2 * p.layout.total + c]) * a[c];
    }
    core.compute({.flops = 4 * channels});
    core.ldm().free(buf);
  }
  auto xb = core.ldm().alloc<f16>(2 * xu.pitch);
  auto yb = core.ldm().alloc<f16>(2 * yu.pitch);
  std::vector<float> xs(xb.size()), ys(yb.size());  // a plane pair in floats (bulk conversions)
  for (std::size_t g = detail::worker(core); g < groups; g += detail::workers(core)) {
    const std::size_t first = 2 * g, k = std::min<std::size_t>(2, xu.count - first);
    detail::wait_all(detail::move_units<true>(core, xu, xb, first, k));
    halves_to_floats(xb.first(k * xu.pitch).span(), std::span<float>(xs.data(), k * xu.pitch));
    std::fill(ys.begin(), ys.end(), 0.0f);
    for (std::size_t s = 0; s < k; ++s) {
      const std::size_t c = (first + s) % channels;
      for (std::size_t h = 0; h < xl.shape.h; ++h) {
        const float* xr = xs.data() + s * xu.pitch + h * xl.w_pitch;
        float* yr = ys.data() + s * yu.pitch + h * yl.w_pitch;
        for (std::size_t w = 0; w < xl.shape.w; ++w) yr[w] = xr[w] * a[c] + b[c];
      }
    }
    floats_to_halves(ys, yb.span());
    core.compute({.flops = 2 * k * xl.shape.hw()});
    detail::wait_all(detail::move_units<false>(core, yu, yb, first, k));
  }
}

}  // namespace

Operator spatialbn_operator() {
  Operator op;
  op.name = "spatialbn";
  op.min_inputs = op.max_inputs = 5;
  op.infer = [](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    detail::check_attrs(attrs, {"epsilon"});
    if (detail::attr_num(attrs, "epsilon", 1e-5) <= 0) throw ConfigError("attribute 'epsilon' must be > 0");
    detail::require_rank4(in.at(0), "spatialbn input");
    for (std::size_t i = 1; i < 5; ++i) {
      if (in.at(i).rank != 1 || in[i].n != in[0].c) {
        throw ConfigError(
            fmt::format("spatialbn: input {} is {}, expected [{}] (scale, bias, mean, var)", i, in[i].str(), in[0].c));
      }
    }
    return std::vector<Shape4>{in[0]};
  };
  op.padding = [](std::size_t i) {
    return (i == 0 || i == 5) ? PaddingSpec{PaddingClass::kTwoD, Unit::kPlane, Unit::kPlane}
                              : PaddingSpec{PaddingClass::kOneD};
  };
  op.run = [](Machine& m, const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out,
              const nlohmann::json& attrs, const std::string& label) {
    const BnParams p{in[1].ptr, in[2].ptr, in[3].ptr, in[4].ptr, in[1].layout()};
    for (std::size_t i = 2; i < 5; ++i) {
      if (!(in[i].layout() == p.layout)) throw ConfigError("spatialbn: scale, bias, mean and var must share a layout");
    }
    detail::launch_all(m, label, bn_kernel, in[0].ptr, in[0].layout(), out[0].ptr, out[0].layout(), p,
                       static_cast<float>(detail::attr_num(attrs, "epsilon", 1e-5)));
  };
  op.reference = [](const std::vector<HostTensor>& in, const nlohmann::json& attrs) {
    const float eps = static_cast<float>(detail::attr_num(attrs, "epsilon", 1e-5));
    HostTensor y = in[0];
    const Shape4& s = y.shape;
    for (std::size_t i = 0; i < y.data.size(); ++i) {
      const std::size_t c = (i / s.hw()) % s.c;
      y.data[i] = (y.data[i] - in[3].data[c]) / std::sqrt(in[4].data[c] + eps) * in[1].data[c] + in[2].data[c];
    }
    return std::vector<HostTensor>{y};
  };
  op.cost = [](const std::vector<Shape4>& in, const nlohmann::json&) {
    return OpCost{2 * in[0].elements() + 4 * in[0].c, 8 * in[0].hw() + 8 * in[0].c};
  };
  op.abs_tolerance = 4e-3;
  op.rel_tolerance = 1.0 / 256;
  return op;
}

}  // namespace ldmsim::kernels
