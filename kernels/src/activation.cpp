// relu, sigmoid, tanh: 1-D class. y = f(x) over the padded buffer; padding is written back as zero.
#include <cmath>

#include "flat.hpp"
#include "ldmsim/kernels/operators.hpp"
#include "op_common.hpp"

namespace ldmsim::kernels {

namespace {

enum class Fn { kRelu, kSigmoid, kTanh };

float apply(Fn fn, float x) {
  switch (fn) {
    case Fn::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Fn::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case Fn::kTanh:
      return std::tanh(x);
  }
  return x;
}

void activation_kernel(Core& core, DevicePtr<const f16> x, DevicePtr<f16> y, Layout layout, Fn fn,
                       std::uint64_t flops) {
  detail::flat_kernel<1>(core, {x}, y, layout, flops, [fn](const std::array<float, 1>& v) { return apply(fn, v[0]); });
}

Operator activation(const char* name, Fn fn, std::uint64_t flops, double abs_tol) {
  Operator op;
  op.name = name;
  op.infer = [](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    detail::check_attrs(attrs, {});
    return std::vector<Shape4>{in.at(0)};
  };
  op.padding = [](std::size_t) { return PaddingSpec{PaddingClass::kOneD}; };
  op.run = [fn, flops, name = std::string(name)](Machine& m, const std::vector<DeviceTensor>& in,
                                                 const std::vector<DeviceTensor>& out, const nlohmann::json&,
                                                 const std::string& label) {
    (void)name;
    detail::launch_all(m, label, activation_kernel, DevicePtr<const f16>(in[0].ptr), out[0].ptr, in[0].layout(), fn,
                       flops);
  };
  op.reference = [fn](const std::vector<HostTensor>& in, const nlohmann::json&) {
    HostTensor y{in[0].shape, in[0].data};
    for (auto& v : y.data) v = apply(fn, v);
    return std::vector<HostTensor>{y};
  };
  op.cost = [flops](const std::vector<Shape4>& in, const nlohmann::json&) {
    return OpCost{flops * in[0].elements(), 0};
  };
  op.abs_tolerance = abs_tol;
  op.rel_tolerance = 1.0 / 1024;
  return op;
}

}  // namespace

Operator relu_operator() {
  return activation("relu", Fn::kRelu, 1, 0.0);
}
Operator sigmoid_operator() {
  return activation("sigmoid", Fn::kSigmoid, 4, 1e-3);
}
Operator tanh_operator() {
  return activation("tanh", Fn::kTanh, 4, 1e-3);
}

}  // namespace ldmsim::kernels
