// spatialbn training: per-channel mean and variance over n, h, w; y = (x - mean) * inv_std * scale + bias,
// plus saved_mean and saved_inv_std. 3-D class on X and Y (every channel plane starts and ends 4-byte aligned);
// cores take channel pairs so the [C] outputs are written two elements at a time.
#include <cmath>

#include "ldmsim/kernels/operators.hpp"
#include "op_common.hpp"
#include "tiles.hpp"

namespace ldmsim::kernels {

namespace {

struct TrainIo {
  DevicePtr<f16> x, scale, bias, y, mean, inv_std;
  Layout xl, pl, yl, ol;  // X, [C] inputs, Y, [C] outputs
};

void bn_train_kernel(Core& core, TrainIo io, float eps) {
  const std::size_t channels = io.xl.shape.c, pairs = (channels + 1) / 2;
  if (detail::worker(core) >= pairs) return;
  const std::size_t xp = io.xl.hw_pitch, yp = io.yl.hw_pitch, hw = io.xl.shape.hw(), planes = io.xl.shape.n;
  auto pb = core.ldm().alloc<f16>(2 * io.pl.total);
  auto ob = core.ldm().alloc<f16>(4);
  // Double-buffer the planes when two x and two y planes fit in ldm, single buffers otherwise.
  const std::uint64_t free = core.ldm().capacity() - core.ldm().used();
  const std::size_t nbuf = 2 * (xp + yp) * sizeof(f16) + 4 * Ldm::kDefaultAlignment <= free ? 2 : 1;
  std::array<LdmSpan<f16>, 2> xb{}, yb{};
  for (std::size_t i = 0; i < nbuf; ++i) {
    xb[i] = core.ldm().alloc<f16>(xp);
    yb[i] = core.ldm().alloc<f16>(yp);
  }
  std::array<DmaHandle, 2> gets{}, puts{};
  std::vector<float> xs(xp), ys(yp, 0.0f);  // the current plane in floats (bulk conversions)
  core.get(pb.first(io.pl.total), DevicePtr<const f16>(io.scale)).wait();
  core.get(pb.subspan(io.pl.total, io.pl.total), DevicePtr<const f16>(io.bias)).wait();
  const double count = static_cast<double>(planes * hw);
  for (std::size_t j = detail::worker(core); j < pairs; j += detail::workers(core)) {
    const std::size_t c0 = 2 * j, kc = std::min<std::size_t>(2, channels - c0);
    float mean[2] = {0, 0}, inv[2] = {0, 0};
    for (std::size_t q = 0; q < kc; ++q) {
      const std::size_t c = c0 + q;
      // Step i < planes reads plane i for the statistics; step planes + n reads plane n again to normalise it.
      auto issue = [&](std::size_t i) {
        gets[i % nbuf] = core.get(xb[i % nbuf], DevicePtr<const f16>(io.x + io.xl.offset(i % planes, c, 0, 0)));
      };
      double sum = 0, sq = 0;
      float a = 0, b = 0;
      issue(0);
      for (std::size_t i = 0; i < 2 * planes; ++i) {
        const std::size_t slot = i % nbuf;
        gets[slot].wait();
        if (nbuf == 2 && i + 1 < 2 * planes) issue(i + 1);  // the other buffer was consumed in step i - 1
        halves_to_floats(xb[slot].span(), xs);
        if (i < planes) {
          for (std::size_t h = 0; h < io.xl.shape.h; ++h) {
            const float* row = xs.data() + h * io.xl.w_pitch;
            for (std::size_t w = 0; w < io.xl.shape.w; ++w) {
              const double v = row[w];
              sum += v;
              sq += v * v;
            }
          }
          core.compute({.flops = 3 * hw});
        } else {
          if (i == planes) {
            const double mu = sum / count, var = std::max(0.0, sq / count - mu * mu);
            mean[q] = static_cast<float>(mu);
            inv[q] = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
            a = inv[q] * static_cast<float>(pb[c]);
            b = static_cast<float>(pb[io.pl.total + c]) - mean[q] * a;
          }
          for (std::size_t h = 0; h < io.xl.shape.h; ++h) {
            const float* xr = xs.data() + h * io.xl.w_pitch;
            float* yr = ys.data() + h * io.yl.w_pitch;
            for (std::size_t w = 0; w < io.xl.shape.w; ++w) yr[w] = xr[w] * a + b;
          }
          core.compute({.flops = 2 * hw});
          puts[slot].wait();  // the previous put from this buffer must be done before it is overwritten
          floats_to_halves(ys, yb[slot].span());
          puts[slot] = core.put(io.y + io.yl.offset(i - planes, c, 0, 0), LdmSpan<const f16>(yb[slot]));
        }
        if (nbuf == 1 && i + 1 < 2 * planes) issue(i + 1);
      }
    }
    puts[0].wait();
    puts[1].wait();
    // Two [C] elements per put; the last pair of an odd C relies on the 1-D plan's zero.
    const std::size_t len = std::min<std::size_t>(2, io.ol.total - c0);
    for (std::size_t q = 0; q < 2; ++q) {
      ob[q] = f16(mean[q]);
      ob[2 + q] = f16(inv[q]);
    }
    auto h1 = core.put(io.mean + c0, LdmSpan<const f16>(ob.first(len)));
    auto h2 = core.put(io.inv_std + c0, LdmSpan<const f16>(ob.subspan(2, len)));
    h1.wait();
    h2.wait();
  }
}

}  // namespace

Operator spatialbn_train_operator() {
  Operator op;
  op.name = "spatialbn_train";
  op.min_inputs = op.max_inputs = 3;
  op.outputs = 3;
  op.infer = [](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    detail::check_attrs(attrs, {"epsilon"});
    if (detail::attr_num(attrs, "epsilon", 1e-5) <= 0) throw ConfigError("attribute 'epsilon' must be > 0");
    detail::require_rank4(in.at(0), "spatialbn_train input");
    for (std::size_t i = 1; i < 3; ++i) {
      if (in.at(i).rank != 1 || in[i].n != in[0].c) {
        throw ConfigError(
            fmt::format("spatialbn_train: input {} is {}, expected [{}] (scale, bias)", i, in[i].str(), in[0].c));
      }
    }
    const Shape4 c = Shape4::from_dims({in[0].c});
    return std::vector<Shape4>{in[0], c, c};
  };
  op.padding = [](std::size_t i) {
    return (i == 0 || i == 3) ? PaddingSpec{PaddingClass::kThreeD} : PaddingSpec{PaddingClass::kOneD};
  };
  op.run = [](Machine& m, const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out,
              const nlohmann::json& attrs, const std::string& label) {
    if (!(in[1].layout() == in[2].layout()) || !(out[1].layout() == out[2].layout())) {
      throw ConfigError("spatialbn_train: the [C] tensors must share a layout");
    }
    const TrainIo io{in[0].ptr,  in[1].ptr,      in[2].ptr,      out[0].ptr,      out[1].ptr,
                     out[2].ptr, in[0].layout(), in[1].layout(), out[0].layout(), out[1].layout()};
    detail::launch_all(m, label, bn_train_kernel, io, static_cast<float>(detail::attr_num(attrs, "epsilon", 1e-5)));
  };
  op.reference = [](const std::vector<HostTensor>& in, const nlohmann::json& attrs) {
    const double eps = detail::attr_num(attrs, "epsilon", 1e-5);
    const Shape4& s = in[0].shape;
    HostTensor y = in[0];
    HostTensor mean{Shape4::from_dims({s.c}), std::vector<float>(s.c)}, inv = mean;
    for (std::size_t c = 0; c < s.c; ++c) {
      double sum = 0, sq = 0;
      for (std::size_t n = 0; n < s.n; ++n)
        for (std::size_t i = 0; i < s.hw(); ++i) {
          const double v = in[0].data[(n * s.c + c) * s.hw() + i];
          sum += v;
          sq += v * v;
        }
      const double cnt = static_cast<double>(s.n * s.hw()), mu = sum / cnt;
      mean.data[c] = static_cast<float>(mu);
      inv.data[c] = static_cast<float>(1.0 / std::sqrt(std::max(0.0, sq / cnt - mu * mu) + eps));
      for (std::size_t n = 0; n < s.n; ++n)
        for (std::size_t i = 0; i < s.hw(); ++i) {
          float& v = y.data[(n * s.c + c) * s.hw() + i];
          v = (v - mean.data[c]) * inv.data[c] * in[1].data[c] + in[2].data[c];
        }
    }
    return std::vector<HostTensor>{y, mean, inv};
  };
  op.cost = [](const std::vector<Shape4>& in, const nlohmann::json&) {
    return OpCost{5 * in[0].elements() + 4 * in[0].c, 4 * in[0].hw() + 4 * in[0].c + 16};
  };
  op.abs_tolerance = 8e-3;
  op.rel_tolerance = 1.0 / 256;
  return op;
}

}  // namespace ldmsim::kernels
