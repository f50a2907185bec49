// add and mul of two tensors of equal shape: 1-D class; both inputs and the output share one plan.
#include "flat.hpp"
#include "ldmsim/kernels/operators.hpp"
#include "op_common.hpp"

namespace ldmsim::kernels {

namespace {

void add_kernel(Core& core, DevicePtr<const f16> a, DevicePtr<const f16> b, DevicePtr<f16> y, Layout layout) {
  detail::flat_kernel<2>(core, {a, b}, y, layout, 1, [](const std::array<float, 2>& v) { return v[0] + v[1]; });
}
void mul_kernel(Core& core, DevicePtr<const f16> a, DevicePtr<const f16> b, DevicePtr<f16> y, Layout layout) {
  detail::flat_kernel<2>(core, {a, b}, y, layout, 1, [](const std::array<float, 2>& v) { return v[0] * v[1]; });
}

Operator binary(const char* name, bool is_add) {
  Operator op;
  op.name = name;
  op.min_inputs = op.max_inputs = 2;
  op.infer = [name = std::string(name)](const std::vector<Shape4>& in, const nlohmann::json& attrs) {
    detail::check_attrs(attrs, {});
    if (!(in.at(0) == in.at(1))) {
      throw ConfigError(fmt::format("{} needs inputs of equal shape, got {} and {}", name, in[0].str(), in[1].str()));
    }
    return std::vector<Shape4>{in[0]};
  };
  op.padding = [](std::size_t) { return PaddingSpec{PaddingClass::kOneD}; };
  op.run = [is_add](Machine& m, const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out,
                    const nlohmann::json&, const std::string& label) {
    detail::launch_all(m, label, is_add ? add_kernel : mul_kernel, DevicePtr<const f16>(in[0].ptr),
                       DevicePtr<const f16>(in[1].ptr), out[0].ptr, in[0].layout());
  };
  op.reference = [is_add](const std::vector<HostTensor>& in, const nlohmann::json&) {
    HostTensor y{in[0].shape, in[0].data};
    for (std::size_t i = 0; i < y.data.size(); ++i)
      y.data[i] = is_add ? y.data[i] + in[1].data[i] : y.data[i] * in[1].data[i];
    return std::vector<HostTensor>{y};
  };
  op.cost = [](const std::vector<Shape4>& in, const nlohmann::json&) { return OpCost{in[0].elements(), 0}; };
  op.abs_tolerance = 1e-3;
  op.rel_tolerance = 1.0 / 1024;
  return op;
}

}  // namespace

Operator add_operator() {
  return binary("add", true);
}
Operator mul_operator() {
  return binary("mul", false);
}

}  // namespace ldmsim::kernels
