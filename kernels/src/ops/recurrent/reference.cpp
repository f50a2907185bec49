// The fp32 host reference of lstm and gru, written from the ONNX operator definitions (not from the kernel):
// gates in ONNX order from W [dirs, gates*H, I], R [dirs, gates*H, H] and B [dirs, 2*gates*H], sums in double.
#include "reference.hpp"

#include <cmath>

namespace ldmsim::ops::recurrent {

namespace {

double logistic(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

}  // namespace

std::vector<HostTensor> reference_cell(const CellShape& s, std::span<const HostTensor> in) {
  const std::size_t gates = onnx_gates(s.kind), H = s.hidden, I = s.input, N = s.batch;
  const bool lstm = s.kind == CellKind::kLstm;
  const auto at = [&](std::size_t i) -> const std::vector<float>* { return in.size() > i ? &in[i].data : nullptr; };
  const std::vector<float>& x = in[0].data;
  const std::vector<float>& w = in[1].data;
  const std::vector<float>& r = in[2].data;
  HostTensor y{Shape{s.seq, s.dirs, N, H}, std::vector<float>(s.seq * s.dirs * N * H)};
  HostTensor y_h{Shape{s.dirs, N, H}, std::vector<float>(s.dirs * N * H)};
  HostTensor y_c{Shape{s.dirs, N, H}, std::vector<float>(s.dirs * N * H)};
  for (std::size_t d = 0; d < s.dirs; ++d) {
    // W_g row j: w[((d*gates + g)*H + j)*I + k]; Wb_g[j] = B[d][g*H + j], Rb_g[j] = B[d][(gates + g)*H + j].
    const auto wx = [&](std::size_t g, std::size_t j, const float* xt) {
      double sum = 0;
      for (std::size_t k = 0; k < I; ++k) sum += static_cast<double>(w[((d * gates + g) * H + j) * I + k]) * xt[k];
      return sum;
    };
    const auto rh = [&](std::size_t g, std::size_t j, const std::vector<double>& h) {
      double sum = 0;
      for (std::size_t k = 0; k < H; ++k) sum += static_cast<double>(r[((d * gates + g) * H + j) * H + k]) * h[k];
      return sum;
    };
    const auto bias = [&](std::size_t half, std::size_t g, std::size_t j) {
      const auto* b = at(3);
      return b == nullptr ? 0.0 : static_cast<double>((*b)[d * 2 * gates * H + (half * gates + g) * H + j]);
    };
    for (std::size_t n = 0; n < N; ++n) {
      std::vector<double> h(H, 0.0), c(H, 0.0);
      if (const auto* h0 = at(4)) {
        for (std::size_t j = 0; j < H; ++j) h[j] = (*h0)[(d * N + n) * H + j];
      }
      if (const auto* c0 = at(5); lstm && c0 != nullptr) {
        for (std::size_t j = 0; j < H; ++j) c[j] = (*c0)[(d * N + n) * H + j];
      }
      for (std::size_t step = 0; step < s.seq; ++step) {
        const std::size_t t = s.reverse(d) ? s.seq - 1 - step : step;
        const float* xt = x.data() + (t * N + n) * I;
        std::vector<double> next(H), reset(H);
        const auto pre = [&](std::size_t g, std::size_t j) {
          return wx(g, j, xt) + rh(g, j, h) + bias(0, g, j) + bias(1, g, j);
        };
        if (!lstm) {
          for (std::size_t j = 0; j < H; ++j) reset[j] = logistic(pre(1, j));
        }
        for (std::size_t j = 0; j < H; ++j) {
          if (lstm) {  // i, o, f, c
            const double ig = logistic(pre(0, j)), og = logistic(pre(1, j)), fg = logistic(pre(2, j));
            c[j] = fg * c[j] + ig * std::tanh(pre(3, j));
            next[j] = og * std::tanh(c[j]);
          } else {  // z, r, h
            const double z = logistic(pre(0, j));
            double candidate = wx(2, j, xt) + bias(0, 2, j);
            if (s.linear_before_reset) {
              candidate += reset[j] * (rh(2, j, h) + bias(1, 2, j));
            } else {  // R_h (r (.) h): the reset gates of every unit
              double gated = 0;
              for (std::size_t k = 0; k < H; ++k)
                gated += static_cast<double>(r[((d * gates + 2) * H + j) * H + k]) * (reset[k] * h[k]);
              candidate += gated + bias(1, 2, j);
            }
            next[j] = (1 - z) * std::tanh(candidate) + z * h[j];
          }
        }
        h = next;
        for (std::size_t j = 0; j < H; ++j) y.data[((t * s.dirs + d) * N + n) * H + j] = static_cast<float>(h[j]);
      }
      for (std::size_t j = 0; j < H; ++j) {
        y_h.data[(d * N + n) * H + j] = static_cast<float>(h[j]);
        y_c.data[(d * N + n) * H + j] = static_cast<float>(c[j]);
      }
    }
  }
  if (lstm) return {y, y_h, y_c};
  return {y, y_h};
}

}  // namespace ldmsim::ops::recurrent
