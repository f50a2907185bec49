// Operators that only move data: reshape and flatten (the same elements in the same C order under a new shape;
// the executor hands the input's buffer over when it can, else the re-layout kernel copies) and concat along an
// axis (destination tiles of the output; each tile's logical elements gathered from the inputs they come from).
#include <algorithm>
#include <numeric>

#include "ldmsim/kernels/relayout.hpp"
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

class ReshapeOp final : public BoundOp {
 public:
  ReshapeOp(Shape in, Shape out, DType type = DType::kF16) : BoundOp({in}, {out}) { set_dtypes({type, type}); }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    relayout(m, in[0], out[0], label);
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    return {HostTensor{output_shapes()[0], in[0].data}};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }
  bool reinterprets_input() const override { return true; }
  std::unique_ptr<BoundOp> with_element_type(DType type) const override {
    return std::make_unique<ReshapeOp>(input_shapes()[0], output_shapes()[0], type);
  }
};

/// An axis attribute in [-rank, rank - 1 + extra], normalized to >= 0.
std::size_t axis_attr(const JsonField& attrs, std::int64_t fallback, std::size_t rank, std::int64_t extra = 0) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t axis = int_attr(attrs, "axis", fallback, -r, r - 1 + extra);
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

std::unique_ptr<BoundOp> bind_reshape(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"shape"});
  if (attrs.json().is_null() || !attrs.has("shape")) reject(name, "needs a 'shape' attribute");
  const JsonField target = attrs.at("shape");
  const auto dims = target.elements();
  if (dims.size() > Shape::kMaxRank) target.fail("must have at most 6 dimensions");
  std::vector<std::uint64_t> out(dims.size());
  std::optional<std::size_t> inferred;
  std::uint64_t known = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i].integer(-1, std::int64_t{1} << 48);
    if (d == -1) {
      if (inferred) dims[i].fail("is a second -1 (at most one dimension is inferred)");
      inferred = i;
      continue;
    }
    if (d == 0) {  // ONNX: 0 keeps the input's dimension
      if (i >= in[0].rank()) dims[i].fail("is 0 (copy the input's dimension) past the input's rank");
      out[i] = in[0][i];
    } else {
      out[i] = static_cast<std::uint64_t>(d);
    }
    known = checked_mul(known, out[i], fmt::format("{}: shape", name));
  }
  if (inferred) {
    if (in[0].elements() % known != 0) {
      reject(name, fmt::format("cannot infer the -1 of {}: {} elements are not a multiple of {}", target.json().dump(),
                               in[0].elements(), known));
    }
    out[*inferred] = in[0].elements() / known;
  }
  const Shape shape(out, fmt::format("{}: shape", name));
  if (shape.elements() != in[0].elements()) {
    reject(name, fmt::format("shape {} has {} elements, the input {} has {}", shape.str(), shape.elements(),
                             in[0].str(), in[0].elements()));
  }
  return std::make_unique<ReshapeOp>(in[0], shape);
}

std::unique_ptr<BoundOp> bind_flatten(std::string_view, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"axis"});
  const std::size_t axis = axis_attr(attrs, 1, in[0].rank(), 1);  // ONNX: axis may equal the rank
  return std::make_unique<ReshapeOp>(in[0], Shape{in[0].product(0, axis), in[0].product(axis, in[0].rank())});
}

struct ConcatArgs {
  std::vector<DevicePtr<const f16>> in;
  std::vector<Layout> layouts;
  std::vector<std::uint64_t> inner;  ///< elements each input contributes to one output row
  std::uint64_t row = 0;             ///< elements of one output row (the sum of inner)
  DevicePtr<f16> out;
  Layout out_layout;
};

void concat_kernel(Core& core, const ConcatArgs& a) {
  auto fill = [&](std::size_t first, std::size_t last, LdmSpan<f16> staging, LdmSpan<f16> logical) {
    // Output element L is element (L / row) * inner_k + (L % row - start_k) of input k.
    for (std::size_t l = first; l < last;) {
      const std::uint64_t outer = l / a.row;
      std::uint64_t within = l % a.row, start = 0;
      std::size_t k = 0;
      while (within >= start + a.inner[k]) start += a.inner[k++];
      const std::size_t n = std::min<std::size_t>(last - l, start + a.inner[k] - within);
      tiling::gather(core, staging, a.in[k], a.layouts[k], outer * a.inner[k] + (within - start), n,
                     logical.data() + (l - first));
      l += n;
    }
  };
  const std::uint64_t shortest = *std::min_element(a.inner.begin(), a.inner.end());
  tiling::write_gathered_tiles(core, a.out, a.out_layout, fill, tiling::gather_share(shortest));
}

class ConcatOp final : public BoundOp {
 public:
  ConcatOp(std::vector<Shape> in, Shape out, std::size_t axis, DType type = DType::kF16)
      : BoundOp(std::move(in), {out}), axis_(axis), units_(units_of(type)) {
    if (type != DType::kF16) set_dtypes(std::vector<DType>(input_shapes().size() + 1, type));
  }
  /// int32 and bool tensors: the same gathers over their 2-byte units (each row's elements are whole words).
  std::unique_ptr<BoundOp> with_element_type(DType type) const override {
    return std::make_unique<ConcatOp>(input_shapes(), output_shapes()[0], axis_, type);
  }
  SplitGeometry split_geometry() const override {
    SplitGeometry s;
    s.axis = axis_;
    return s;
  }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  bool reads_any_layout(std::size_t) const override { return true; }  // every input is gathered by logical index
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    ConcatArgs a{{}, {}, inner(), 0, out[0].ptr, out[0].layout()};
    for (const DeviceTensor& t : in) {
      a.in.push_back(DevicePtr<const f16>(t.ptr));
      a.layouts.push_back(t.layout());
    }
    a.row = std::accumulate(a.inner.begin(), a.inner.end(), std::uint64_t{0});
    launch_all(m, label, concat_kernel, a);
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& shape = output_shapes()[0];
    HostTensor y{shape, {}};
    y.data.reserve(shape.elements());
    const std::uint64_t outer = shape.product(0, axis_);
    for (std::uint64_t o = 0; o < outer; ++o) {
      for (const HostTensor& t : in) {
        const std::uint64_t n = t.shape.product(axis_, t.shape.rank());
        y.data.insert(y.data.end(), t.data.begin() + static_cast<std::ptrdiff_t>(o * n),
                      t.data.begin() + static_cast<std::ptrdiff_t>((o + 1) * n));
      }
    }
    return {y};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }

 private:
  std::vector<std::uint64_t> inner() const {  // in 2-byte units
    std::vector<std::uint64_t> out;
    for (const Shape& s : input_shapes()) out.push_back(s.product(axis_, s.rank()) * units_);
    return out;
  }
  std::size_t axis_;
  std::size_t units_;
};

std::unique_ptr<BoundOp> bind_concat(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"axis"});
  if (in[0].rank() == 0) reject(name, "cannot concatenate scalars (rank 0)");
  const std::size_t axis = axis_attr(attrs, 1 < in[0].rank() ? 1 : 0, in[0].rank());
  std::vector<std::uint64_t> dims(in[0].dims().begin(), in[0].dims().end());
  for (std::size_t k = 1; k < in.size(); ++k) {
    bool same = in[k].rank() == in[0].rank();
    for (std::size_t d = 0; same && d < in[0].rank(); ++d) same = d == axis || in[k][d] == in[0][d];
    if (!same) {
      reject(name,
             fmt::format("input {} {} does not match input 0 {} outside axis {}", k, in[k].str(), in[0].str(), axis));
    }
    dims[axis] = checked_add(dims[axis], in[k][axis], fmt::format("{}: axis {}", name, axis));
  }
  return std::make_unique<ConcatOp>(std::vector<Shape>(in.begin(), in.end()),
                                    Shape(dims, fmt::format("{}: output", name)), axis);
}

}  // namespace

void add_layout_kinds(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("reshape", Arity{1, 1, 1}, bind_reshape));
  registry.add(std::make_unique<FunctionKind>("flatten", Arity{1, 1, 1}, bind_flatten));
  registry.add(
      std::make_unique<FunctionKind>("concat", Arity{1, 64, 1}, bind_concat, OperatorTraits{SplitRule::kConcat}));
}

}  // namespace ldmsim::ops
