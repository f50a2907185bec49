// Private: copies a strided view of a tensor into a new tensor, on every core of every group. A view says where each
// output element comes from: the element at C-order coordinates c of `dims` is input element
// offset + sum(c[d] * strides[d]). transpose (any permutation whose last axis stays last), slice (starts, ends,
// steps, negative steps) and split are such views. Contiguous runs of the input are read by (strided) block gets,
// many rows per request, and picked in ldm; no element travels alone unless the input is laid out with padding
// inside it (naive staging).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "ldmsim/kernels/operator.hpp"

namespace ldmsim::ops {

/// The most axes a copied view has once canonical: a tensor's, and the 2-byte units of a wider element (widened).
constexpr std::size_t kMaxViewRank = Shape::kMaxRank + 1;

/// A strided view of a tensor (see the file comment). Strides in elements, negative for a reversed axis.
struct StridedView {
  std::vector<std::uint64_t> dims;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;

  std::uint64_t elements() const;
  /// The same view with size-1 axes dropped and neighbouring axes that walk the input as one axis merged (at least
  /// rank 1).
  StridedView canonical() const;
  /// The view in units of 1/`units` of an element (a 32-bit element is 2 units): a last axis of `units` with
  /// stride 1, every other stride and the offset scaled.
  StridedView widened(std::size_t units) const;
};

/// The strides, in elements, of a C-order tensor of `dims`.
std::vector<std::int64_t> natural_strides(std::span<const std::uint64_t> dims);

/// The view of `perm` over a C-order tensor of `dims` (output axis d is input axis perm[d]).
StridedView permuted_view(std::span<const std::uint64_t> dims, std::span<const std::size_t> perm);

/// The view of a C-order tensor of shape `input` repeated to `output` by numpy broadcasting (stride 0 on the axes it
/// repeats): expand's view.
StridedView broadcast_view(const Shape& input, const Shape& output);

/// Runs the copy of `view` (at most kMaxViewRank axes once canonical) of x (laid out as xl) into y (laid out as yl,
/// which holds view.elements() elements) under `label`, on every core.
void run_view_copy(Machine& machine, const std::string& label, const StridedView& view, DevicePtr<const f16> x,
                   const Layout& xl, DevicePtr<f16> y, const Layout& yl);

/// Kernel side: input elements start + j * stride (j < n) of x into out (ldm), through `staging` (at least 4
/// elements): span by span in pieces of the staging buffer, one element read once for a stride of 0.
void read_strided_run(Core& core, DevicePtr<const f16> x, const Layout& xl, LdmSpan<f16> staging, std::int64_t start,
                      std::int64_t stride, std::uint64_t n, f16* out,
                      std::source_location site = std::source_location::current());

/// The permutation of a transpose that copies a view of its input (it keeps the last axis last), else nullopt.
std::optional<std::vector<std::size_t>> view_transpose_permutation(const BoundOp& op);

/// {batches, m, n} when `op` is a transpose that swaps the last two axes of [batches, m, n] (rows and columns
/// transposed in ldm), else nullopt.
std::optional<std::array<std::uint64_t, 3>> swapped_matrices(const BoundOp& op);

/// Matrices read in place from a larger input: matrix b's row r starts at element offset + b * batch + r * pitch.
struct StridedSwap {
  std::uint64_t batches = 1, m = 1, n = 1;
  std::uint64_t offset = 0, pitch = 1, batch = 0;
};
/// An op writing the swap (transpose of the last two axes) of those matrices of an input of shape x, as y.
std::unique_ptr<BoundOp> strided_swap(Shape x, Shape y, const StridedSwap& swap);
/// The matrices `op` swaps when it is such an op, else nullopt.
std::optional<StridedSwap> strided_swap_of(const BoundOp& op);

/// The fp32 reference: the view's elements in C order, computed coordinate by coordinate.
std::vector<float> view_reference(const StridedView& view, std::span<const float> x);

/// An op whose output is a strided view of its one input (slice, expand): 1-D padding, the view copy as its kernel,
/// the view read coordinate by coordinate (unreduced) as its reference.
class ViewOp final : public BoundOp {
 public:
  ViewOp(Shape x, Shape y, StridedView view, DType type = DType::kF16)
      : BoundOp({std::move(x)}, {std::move(y)}), view_(std::move(view)) {
    set_dtypes({type, type});
  }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    run_view_copy(m, label, view_.widened(units_of(dtype(0))), DevicePtr<const f16>(in[0].ptr), in[0].layout(),
                  out[0].ptr, out[0].layout());
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    return {HostTensor{output_shapes()[0], view_reference(view_, in[0].data)}};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }
  const StridedView& strided_view() const { return view_; }
  std::unique_ptr<BoundOp> with_element_type(DType type) const override {
    if (view_.widened(units_of(type)).canonical().dims.size() > kMaxViewRank) return nullptr;
    return std::make_unique<ViewOp>(input_shapes()[0], output_shapes()[0], view_, type);
  }

 private:
  StridedView view_;
};

}  // namespace ldmsim::ops
