// softmax over the flattened c*h*w of each sample: 2-D class, samples move in pairs when c*h*w is odd.
#include <cmath>
#include <limits>

#include "ldmsim/kernels/operators.hpp"
#include "op_common.hpp"
#include "tiles.hpp"

namespace ldmsim::kernels {

namespace {

// Calls fn(logical index, element offset within the sample) for each element of one sample.
template <typename F>
void each_in_sample(const Layout& l, F&& fn) {
  std::size_t i = 0;
  for (std::size_t c = 0; c < l.shape.c; ++c)
    for (std::size_t h = 0; h < l.shape.h; ++h)
      for (std::size_t w = 0; w < l.shape.w; ++w) fn(i++, c * l.hw_pitch + h * l.w_pitch + w);
}

// True when a sample's logical elements are contiguous (no padding inside it).
bool contiguous(const Layout& l) {
  return l.w_pitch == l.shape.w && l.hw_pitch == l.shape.hw();
}

void softmax_kernel(Core& core, DevicePtr<f16> x, Layout xl, DevicePtr<f16> y, Layout yl) {
  const detail::Units xu = detail::samples(x, xl), yu = detail::samples(y, yl);
  auto xb = core.ldm().alloc<f16>(2 * xu.pitch);
  auto yb = core.ldm().alloc<f16>(2 * yu.pitch);
  std::vector<float> v(xl.shape.chw());
  const std::size_t groups = (xu.count + 1) / 2;
  for (std::size_t g = detail::worker(core); g < groups; g += detail::workers(core)) {
    const std::size_t first = 2 * g, k = std::min<std::size_t>(2, xu.count - first);
    detail::wait_all(detail::move_units<true>(core, xu, xb, first, k));
    std::fill(yb.begin(), yb.end(), f16{});
    for (std::size_t s = 0; s < k; ++s) {
      float mx = -std::numeric_limits<float>::infinity();
      if (contiguous(xl)) {  // one bulk conversion per sample
        halves_to_floats(xb.subspan(s * xu.pitch, v.size()).span(), v);
        for (float e : v) mx = std::max(mx, e);
      } else {
        each_in_sample(xl, [&](std::size_t i, std::size_t off) {
          v[i] = static_cast<float>(xb[s * xu.pitch + off]);
          mx = std::max(mx, v[i]);
        });
      }
      float sum = 0.0f;
      for (auto& e : v) sum += (e = std::exp(e - mx));
      for (auto& e : v) e /= sum;
      if (contiguous(yl)) {
        floats_to_halves(v, yb.subspan(s * yu.pitch, v.size()).span());
      } else {
        each_in_sample(yl, [&](std::size_t i, std::size_t off) { yb[s * yu.pitch + off] = f16(v[i]); });
      }
    }
    core.compute({.flops = 5 * k * v.size()});
    detail::wait_all(detail::move_units<false>(core, yu, yb, first, k));
  }
}

}  // namespace

Operator softmax_operator() {
  Operator op;
  op.name = "softmax";
  op.infer = [](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    detail::check_attrs(attrs, {"axis"});
    if (detail::attr_int(attrs, "axis", 1, 0) != 1) throw ConfigError("attribute 'axis' must be 1 (c*h*w of each n)");
    return std::vector<Shape4>{in.at(0)};
  };
  op.padding = [](std::size_t) { return PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample}; };
  op.run = [](Machine& m, const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out,
              const nlohmann::json&, const std::string& label) {
    detail::launch_all(m, label, softmax_kernel, in[0].ptr, in[0].layout(), out[0].ptr, out[0].layout());
  };
  op.reference = [](const std::vector<HostTensor>& in, const nlohmann::json&) {
    HostTensor y = in[0];
    const std::size_t m = y.shape.chw();
    for (std::size_t n = 0; n < y.shape.n; ++n) {
      float* row = y.data.data() + n * m;
      float mx = *std::max_element(row, row + m), sum = 0.0f;
      for (std::size_t i = 0; i < m; ++i) sum += (row[i] = std::exp(row[i] - mx));
      for (std::size_t i = 0; i < m; ++i) row[i] /= sum;
    }
    return std::vector<HostTensor>{y};
  };
  op.cost = [](const std::vector<Shape4>& in, const nlohmann::json&) {
    return OpCost{5 * in[0].elements(), 4 * in[0].chw() + 4};
  };
  op.abs_tolerance = 1e-4;
  op.rel_tolerance = 1.0 / 512;
  return op;
}

}  // namespace ldmsim::kernels
