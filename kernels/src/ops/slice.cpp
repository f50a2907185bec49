// slice: starts, ends, axes and steps with ONNX's meaning (negative indices count from the end, out-of-range
// bounds are clamped, a negative step walks an axis backwards). The result is a strided view of the input, copied
// by view_copy.hpp on every core. ONNX Split becomes one slice per output at import.
#include <algorithm>
#include <vector>

#include "ldmsim/kernels/slice_axis.hpp"
#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

std::vector<std::int64_t> integer_list(const JsonField& attrs, std::string_view key, std::size_t expected,
                                       const char* what) {
  const auto field = attrs.find(key);
  std::vector<std::int64_t> out;
  if (!field) return out;
  for (const JsonField& item : field->elements()) out.push_back(item.integer());
  if (expected != 0 && out.size() != expected) {
    field->fail(fmt::format("has {} entries but starts has {} ({})", out.size(), expected, what));
  }
  return out;
}

std::unique_ptr<BoundOp> bind_slice(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"starts", "ends", "axes", "steps"});
  const Shape& x = in[0];
  const std::size_t rank = x.rank();
  if (rank == 0) reject(name, "cannot slice a scalar");
  if (!attrs.has("starts") || !attrs.has("ends")) reject(name, "needs attributes starts and ends");
  const std::vector<std::int64_t> starts = integer_list(attrs, "starts", 0, "");
  const std::vector<std::int64_t> ends = integer_list(attrs, "ends", starts.size(), "one end per start");
  std::vector<std::int64_t> axes = integer_list(attrs, "axes", starts.size(), "one axis per start");
  std::vector<std::int64_t> steps = integer_list(attrs, "steps", starts.size(), "one step per start");
  if (starts.empty()) reject(name, "starts is empty");
  if (axes.empty()) {
    if (starts.size() > rank) reject(name, fmt::format("{} starts for an input of rank {}", starts.size(), rank));
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  const std::vector<std::int64_t> natural = natural_strides(x.dims());
  StridedView view;
  view.dims.assign(x.dims().begin(), x.dims().end());
  view.strides = natural;
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axes[i] < -r || axes[i] >= r) reject(name, fmt::format("axis {} is outside rank {}", axes[i], rank));
    const auto axis = static_cast<std::size_t>(axes[i] < 0 ? axes[i] + r : axes[i]);
    if (seen[axis]) reject(name, fmt::format("axis {} is sliced twice", axis));
    seen[axis] = true;
    if (steps[i] == 0) reject(name, fmt::format("step of axis {} is 0", axis));
    const SliceAxis taken = slice_axis(starts[i], ends[i], steps[i], x[axis]);
    if (taken.count == 0) {
      reject(name, fmt::format("axis {} of {} sliced from {} to {} by {} is empty (tensors have no empty dims)", axis,
                               x.str(), starts[i], ends[i], steps[i]));
    }
    view.dims[axis] = taken.count;
    view.offset += taken.first * natural[axis];
    view.strides[axis] = taken.step * natural[axis];  // |step| < dim when count >= 2: no overflow
  }
  return std::make_unique<ViewOp>(x, Shape(view.dims), view);
}

}  // namespace

void add_slice_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("slice", Arity{1, 1, 1}, bind_slice));
}

}  // namespace ldmsim::ops
