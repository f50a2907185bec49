// gather(data, indices) along an axis by runtime int32 indices (ONNX Gather; an embedding lookup is gather of a
// [V, D] table by token ids along axis 0). The output is data[:axis] + indices' shape + data[axis+1:], of data's
// element type. Output rows (the `inner` elements after the axis, for one outer position and one index) are
// destination tiles dealt over every core of every group; each core reads the indices its rows need, a window of
// them per request, checks each against the axis (negative ones count from the end), and reads each row it copies
// with block gets. An index outside the axis is the fault index-out-of-range, naming the core, the position of the
// index and its value, before any byte of that row is read.
#include <algorithm>

#include "ldmsim/sim/fault.hpp"
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

struct GatherArgs {
  std::string label;
  DevicePtr<const f16> data;
  Layout data_layout;  ///< in 2-byte units
  DevicePtr<const f16> indices;
  std::uint64_t count = 0;  ///< indices
  std::uint64_t dim = 0;    ///< the gathered axis' size
  std::uint64_t row = 0;    ///< 2-byte units after the axis (inner elements x units per element)
  DevicePtr<f16> y;
  Layout y_layout;
};

/// The indices a core's rows need, read a window at a time.
class IndexWindow {
 public:
  static constexpr std::size_t kWords = 256;
  IndexWindow(Core& core, const GatherArgs& a)
      : core_(core), a_(a), buf_(core.ldm().alloc<f16>(2 * kWords + 2)), words_(core.ldm().alloc<f16>(2 * kWords)) {}

  /// Index j, made non-negative and checked against the axis (the fault index-out-of-range otherwise).
  std::uint64_t at(std::uint64_t j) {
    if (j < first_ || j >= first_ + held_) load(j);
    const auto raw = static_cast<std::int64_t>(element_value(std::span<const f16>(words_.data(), 2 * held_),
                                                             DType::kI32, static_cast<std::size_t>(j - first_)));
    const std::int64_t v = raw < 0 ? raw + static_cast<std::int64_t>(a_.dim) : raw;
    if (v < 0 || static_cast<std::uint64_t>(v) >= a_.dim) {
      throw Fault(FaultKind::kIndexOutOfRange, {core_.cg(), core_.id()}, core_.cycle(), a_.label,
                  fmt::format("gather: index {} (position {} of the indices) is outside [-{}, {}), the axis it indexes",
                              raw, j, a_.dim, a_.dim));
    }
    return static_cast<std::uint64_t>(v);
  }

 private:
  void load(std::uint64_t j) {
    first_ = j;
    held_ = static_cast<std::size_t>(std::min<std::uint64_t>(kWords, a_.count - j));
    tiling::gather(core_, buf_, a_.indices, Layout::natural(Shape4{.n = a_.count * 2}), 2 * j, 2 * held_,
                   words_.data());
  }
  Core& core_;
  const GatherArgs& a_;
  LdmSpan<f16> buf_, words_;
  std::uint64_t first_ = 0;
  std::size_t held_ = 0;
};

void gather_kernel(Core& core, const GatherArgs& a) {
  IndexWindow indices(core, a);
  const auto fill = [&](std::size_t first, std::size_t last, LdmSpan<f16> staging, LdmSpan<f16> logical) {
    for (std::size_t l = first; l < last;) {
      const std::uint64_t r = l / a.row, within = l % a.row;
      const std::uint64_t outer = r / a.count, j = r % a.count;
      const std::uint64_t v = indices.at(j);
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(a.row - within, last - l));
      tiling::gather(core, staging, a.data, a.data_layout, (outer * a.dim + v) * a.row + within, n,
                     logical.data() + (l - first));
      core.compute({.cycles = 1});  // the index's bounds check and address arithmetic
      l += n;
    }
  };
  tiling::write_gathered_tiles(core, a.y, a.y_layout, fill, tiling::gather_share(a.row));
}

class GatherOp final : public BoundOp {
 public:
  GatherOp(Shape data, Shape indices, Shape y, std::size_t axis, DType type)
      : BoundOp({std::move(data), std::move(indices)}, {std::move(y)}), axis_(axis) {
    set_dtypes({type, DType::kI32, type});
  }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  InputRole input_role(std::size_t k) const override { return k == 0 ? InputRole::kParameter : InputRole::kData; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const Shape& x = input_shapes()[0];
    launch_all(m, label, gather_kernel,
               GatherArgs{label, DevicePtr<const f16>(in[0].ptr), in[0].layout(), DevicePtr<const f16>(in[1].ptr),
                          input_shapes()[1].elements(), x[axis_], x.product(axis_ + 1, x.rank()) * units_of(dtype(0)),
                          out[0].ptr, out[0].layout()});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& x = input_shapes()[0];
    const std::uint64_t dim = x[axis_], inner = x.product(axis_ + 1, x.rank()), count = in[1].data.size();
    HostTensor out{output_shapes()[0], {}};
    out.data.reserve(output_shapes()[0].elements());
    for (std::uint64_t o = 0; o < x.product(0, axis_); ++o) {
      for (std::uint64_t j = 0; j < count; ++j) {
        auto v = static_cast<std::int64_t>(in[1].data[j]);
        if (v < 0) v += static_cast<std::int64_t>(dim);
        if (v < 0 || static_cast<std::uint64_t>(v) >= dim) throw std::out_of_range("gather reference: index");
        const auto from =
            in[0].data.begin() + static_cast<std::ptrdiff_t>((o * dim + static_cast<std::uint64_t>(v)) * inner);
        out.data.insert(out.data.end(), from, from + static_cast<std::ptrdiff_t>(inner));
      }
    }
    return {out};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }

 private:
  std::size_t axis_;
};

class GatherKind final : public OperatorKind {
 public:
  std::string_view name() const override { return "gather"; }
  Arity arity() const override { return {2, 2, 1}; }
  std::unique_ptr<BoundOp> bind(const JsonField& attrs, std::span<const Shape> inputs) const override {
    const std::vector<DType> types(inputs.size(), DType::kF16);
    return bind_typed(attrs, inputs, types);
  }
  std::unique_ptr<BoundOp> bind_typed(const JsonField& attrs, std::span<const Shape> in,
                                      std::span<const DType> types) const override {
    check_attrs(attrs, {"axis"});
    if (types[1] != DType::kI32) {
      reject(name(), fmt::format("indices (input 1) are {}, expected int32 (ONNX int64 and int32 indices are held as "
                                 "int32)",
                                 to_string(types[1])));
    }
    const Shape& x = in[0];
    if (x.rank() == 0) reject(name(), "cannot gather from a scalar");
    const auto rank = static_cast<std::int64_t>(x.rank());
    const std::int64_t given = int_attr(attrs, "axis", 0, -rank, rank - 1);
    const auto axis = static_cast<std::size_t>(given < 0 ? given + rank : given);
    std::vector<std::uint64_t> dims(x.dims().begin(), x.dims().begin() + static_cast<std::ptrdiff_t>(axis));
    dims.insert(dims.end(), in[1].dims().begin(), in[1].dims().end());
    dims.insert(dims.end(), x.dims().begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.dims().end());
    if (dims.size() > Shape::kMaxRank) {
      reject(name(), fmt::format("the output would have rank {} (at most {})", dims.size(), Shape::kMaxRank));
    }
    return std::make_unique<GatherOp>(x, in[1], Shape(dims, "gather: output"), axis, types[0]);
  }
};

}  // namespace

void add_gather_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<GatherKind>());
}

}  // namespace ldmsim::ops
