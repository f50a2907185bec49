// expand: a tensor repeated along its size-1 axes to a shape (numpy broadcasting, both ways, as ONNX Expand). The
// result is a strided view of the input whose repeated axes have stride 0, copied by view_copy.hpp on every core.
#include <vector>

#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

class ExpandOp final : public BoundOp {
 public:
  ExpandOp(Shape x, Shape y, StridedView view) : BoundOp({std::move(x)}, {std::move(y)}), view_(std::move(view)) {}

  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    run_view_copy(m, label, view_, DevicePtr<const f16>(in[0].ptr), in[0].layout(), out[0].ptr, out[0].layout());
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    // Element by element through broadcast_strides (the kernel copies the reduced view).
    const Shape& y = output_shapes()[0];
    const auto strides = broadcast_strides(input_shapes()[0], y);
    HostTensor out{y, std::vector<float>(y.elements())};
    for (std::uint64_t i = 0; i < y.elements(); ++i) {
      std::uint64_t rest = i, source = 0;
      for (std::size_t d = y.rank(); d-- > 0;) {
        source += (rest % y[d]) * strides[d];
        rest /= y[d];
      }
      out.data[i] = in[0].data[source];
    }
    return {out};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }

 private:
  StridedView view_;
};

std::unique_ptr<BoundOp> bind_expand(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"shape"});
  const auto field = attrs.find("shape");
  if (!field) reject(name, "needs attribute shape");
  std::vector<std::uint64_t> target;
  for (const JsonField& item : field->elements()) target.push_back(item.unsigned_integer(1, std::uint64_t{1} << 48));
  if (target.size() > Shape::kMaxRank) field->fail(fmt::format("has {} dims (at most {})", target.size(), 6));
  Shape y;
  try {
    y = broadcast_shapes(in[0], Shape(target, "expand shape"));
  } catch (const ConfigError& e) {
    reject(name, e.what());
  }
  const auto strides = broadcast_strides(in[0], y);
  StridedView view;
  view.dims.assign(y.dims().begin(), y.dims().end());
  for (std::size_t d = 0; d < y.rank(); ++d) view.strides.push_back(static_cast<std::int64_t>(strides[d]));
  return std::make_unique<ExpandOp>(in[0], y, std::move(view));
}

}  // namespace

void add_expand_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("expand", Arity{1, 1, 1}, bind_expand));
}

}  // namespace ldmsim::ops
