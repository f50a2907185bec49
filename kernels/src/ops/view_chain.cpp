// Composition of view steps (view_chain.hpp). The composed view is kept over the chain's first input: a transpose
// permutes its axes, a slice or expand (a view aligned with its input's axes, numpy-style from the right) moves its
// origin and scales or zeroes its strides, and a reshape regroups its axes where they walk the input contiguously.
#include "ldmsim/kernels/view_chain.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "view_copy.hpp"

namespace ldmsim {

namespace {

using ops::natural_strides;
using ops::StridedView;

/// `v` (whose elements are those of a tensor of v.dims) seen as a tensor of `dims`: axes regrouped within runs of
/// axes that step over each other exactly; nullopt when a new axis would span two such runs.
std::optional<StridedView> reshaped(const StridedView& v, std::span<const std::uint64_t> dims) {
  const StridedView runs = v.canonical();  // each axis: a run of axes walking the input contiguously
  StridedView out;
  out.offset = v.offset;
  out.dims.assign(dims.begin(), dims.end());
  out.strides.assign(dims.size(), 1);
  std::size_t run = runs.dims.size();
  std::uint64_t left = 1;  // elements of the current run not yet given to a new axis
  std::int64_t stride = 1;
  for (std::size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 1) continue;
    if (left == 1) {
      if (run == 0) return std::nullopt;
      --run;
      left = runs.dims[run], stride = runs.strides[run];
    }
    if (left % dims[d] != 0) return std::nullopt;
    out.strides[d] = stride;
    stride *= static_cast<std::int64_t>(dims[d]);
    left /= dims[d];
  }
  if (left != 1) return std::nullopt;
  // Runs left over can only be of size 1 (canonical() gives {1} for a view of one element).
  for (std::size_t r = 0; r < run; ++r) {
    if (runs.dims[r] != 1) return std::nullopt;
  }
  return out;
}

/// `v` followed by `w`, a view over a C-order tensor of v.dims aligned with its axes from the right: output axis j
/// reads axis j - (rank difference) by a whole step of it (0 for a repeated axis), or repeats (stride 0) where it
/// has no such axis. nullopt when `w` is not of that form.
std::optional<StridedView> followed_by(const StridedView& v, const StridedView& w) {
  const std::size_t rank_in = v.dims.size(), rank_out = w.dims.size();
  if (rank_out < rank_in || w.strides.size() != rank_out || w.offset < 0) return std::nullopt;
  const std::vector<std::int64_t> natural = natural_strides(v.dims);
  StridedView out;
  out.dims = w.dims;
  out.offset = v.offset;
  // w's origin, axis by axis (mixed radix over v.dims).
  std::int64_t rest = w.offset;
  std::vector<std::int64_t> origin(rank_in, 0);
  for (std::size_t a = 0; a < rank_in; ++a) {
    origin[a] = rest / natural[a];
    rest %= natural[a];
    if (origin[a] >= static_cast<std::int64_t>(v.dims[a])) return std::nullopt;
    out.offset += origin[a] * v.strides[a];
  }
  for (std::size_t j = 0; j < rank_out; ++j) {
    if (j < rank_out - rank_in) {
      if (w.strides[j] != 0) return std::nullopt;
      out.strides.push_back(0);
      continue;
    }
    const std::size_t a = j - (rank_out - rank_in);
    if (w.strides[j] % natural[a] != 0) return std::nullopt;
    const std::int64_t step = w.strides[j] / natural[a];
    const std::int64_t last = origin[a] + step * (static_cast<std::int64_t>(w.dims[j]) - 1);
    if (last < 0 || last >= static_cast<std::int64_t>(v.dims[a])) return std::nullopt;
    out.strides.push_back(step * v.strides[a]);
  }
  return out;
}

/// True when every element of `v` lies in [0, elements).
bool inside(const StridedView& v, std::uint64_t elements) {
  std::int64_t low = v.offset, high = v.offset;
  for (std::size_t d = 0; d < v.dims.size(); ++d) {
    const std::int64_t reach = v.strides[d] * (static_cast<std::int64_t>(v.dims[d]) - 1);
    (reach < 0 ? low : high) += reach;
  }
  return low >= 0 && high < static_cast<std::int64_t>(elements);
}

bool one_f16_in_one_out(const BoundOp& op) {
  return op.input_shapes().size() == 1 && op.output_shapes().size() == 1 && op.dtype(0) == DType::kF16 &&
         op.dtype(1) == DType::kF16;
}

/// The swap `op` (of [batches, m, n]) of the tensor `v` views in x, read in place: the matrices' rows must be runs
/// of x (columns one apart) at one pitch, the matrices at one stride.
std::unique_ptr<BoundOp> swap_of(const Shape& x, const StridedView& v, const BoundOp& op) {
  const auto matrices = ops::swapped_matrices(op);
  const Shape& in = op.input_shapes()[0];
  if (!std::equal(in.dims().begin(), in.dims().end(), v.dims.begin(), v.dims.end())) return nullptr;
  const std::optional<StridedView> as = reshaped(v, *matrices);
  if (!as || !inside(v, x.elements())) return nullptr;
  const std::int64_t batch = as->strides[0], pitch = as->strides[1];
  if (as->strides[2] != 1 || pitch < static_cast<std::int64_t>((*matrices)[2]) || batch < 0 || as->offset < 0) {
    return nullptr;
  }
  ops::StridedSwap swap;
  swap.batches = (*matrices)[0], swap.m = (*matrices)[1], swap.n = (*matrices)[2];
  swap.offset = static_cast<std::uint64_t>(as->offset);
  swap.pitch = static_cast<std::uint64_t>(pitch);
  swap.batch = static_cast<std::uint64_t>(batch);
  if (swap.batches > 1 && swap.batch == 0) return nullptr;  // 0 means packed to the kernel
  return ops::strided_swap(x, op.output_shapes()[0], swap);
}

}  // namespace

bool is_reinterpretation(const BoundOp& op) {
  return one_f16_in_one_out(op) && op.reinterprets_input();
}

bool is_swap_step(const BoundOp& op) {
  return one_f16_in_one_out(op) && ops::swapped_matrices(op).has_value();
}

bool is_view_step(const BoundOp& op) {
  if (!one_f16_in_one_out(op)) return false;
  return op.reinterprets_input() || dynamic_cast<const ops::ViewOp*>(&op) != nullptr ||
         ops::view_transpose_permutation(op).has_value();
}

std::unique_ptr<BoundOp> compose_view_chain(std::span<const BoundOp* const> chain) {
  if (chain.empty()) return nullptr;
  const Shape& x = chain.front()->input_shapes()[0];
  StridedView v;
  v.dims.assign(x.dims().begin(), x.dims().end());
  v.strides = natural_strides(v.dims);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const BoundOp& op = *chain[i];
    if (i > 0 && i + 1 == chain.size() && is_swap_step(op)) return swap_of(x, v, op);
    if (!is_view_step(op)) return nullptr;
    const Shape& in = op.input_shapes()[0];
    const Shape& out = op.output_shapes()[0];
    if (!std::equal(in.dims().begin(), in.dims().end(), v.dims.begin(), v.dims.end())) return nullptr;
    std::optional<StridedView> next;
    if (op.reinterprets_input()) {
      next = reshaped(v, out.dims());
    } else if (const auto* view = dynamic_cast<const ops::ViewOp*>(&op)) {
      next = followed_by(v, view->strided_view());
    } else if (const auto perm = ops::view_transpose_permutation(op)) {
      next.emplace();
      next->offset = v.offset;
      for (const std::size_t p : *perm) {
        next->dims.push_back(v.dims[p]);
        next->strides.push_back(v.strides[p]);
      }
    }
    if (!next || !std::equal(out.dims().begin(), out.dims().end(), next->dims.begin(), next->dims.end())) {
      return nullptr;
    }
    v = std::move(*next);
  }
  if (!inside(v, x.elements())) return nullptr;
  return std::make_unique<ops::ViewOp>(x, chain.back()->output_shapes()[0], std::move(v));
}

std::optional<ViewMatrices> view_matrices(const BoundOp& op, std::uint64_t batches, std::uint64_t rows,
                                          std::uint64_t cols) {
  if (op.output_shapes().size() != 1 || op.output_shapes()[0].elements() != batches * rows * cols) return std::nullopt;
  if (const auto* view = dynamic_cast<const ops::ViewOp*>(&op)) {
    const std::array<std::uint64_t, 3> dims{batches, rows, cols};
    const std::optional<StridedView> as = reshaped(view->strided_view(), dims);
    if (!as || as->offset < 0 || as->strides[0] < 0 || as->strides[1] < 0 || as->strides[2] != 1) return std::nullopt;
    return ViewMatrices{{static_cast<std::uint64_t>(as->offset), static_cast<std::uint64_t>(as->strides[0]),
                         static_cast<std::uint64_t>(as->strides[1])},
                        false};
  }
  if (const auto swap = ops::strided_swap_of(op)) {
    // The swap writes matrices [n, m] of its input's [m, n]; the output's [rows, cols] matrices are `per` = n / rows
    // consecutive row blocks of each: output matrix b is columns [j * rows, (j + 1) * rows) of input matrix b / per
    // (j = b % per), at element offset + (b / per) * batch + j * rows. One stride when that is linear in b.
    if (rows == 0 || swap->m != cols || swap->n % rows != 0 || swap->batches * (swap->n / rows) != batches) {
      return std::nullopt;
    }
    const std::uint64_t per = swap->n / rows;
    std::uint64_t stride = swap->batch;
    if (per > 1) {
      if (swap->batches > 1 && swap->batch != swap->n) return std::nullopt;
      stride = rows;
    }
    return ViewMatrices{{swap->offset, stride, swap->pitch}, true};
  }
  return std::nullopt;
}

}  // namespace ldmsim
