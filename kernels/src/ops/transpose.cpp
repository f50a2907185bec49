// transpose of any permutation (rank 1 to 6; ONNX Transpose). The permutation is first reduced (size-1 axes dropped,
// axes that stay neighbours merged). When the input's last axis stays last, the output is a strided view of runs of
// the input (view_copy.hpp: many runs per strided get). When the last two (merged) axes swap, each core writes its
// share of the output in destination tiles: k whole output rows come from one strided read of M runs of k columns
// (k as large as the staging buffer allows) transposed in ldm; a partial row, or a matrix too tall for two columns,
// is read column by column as strided blocks of one element per row; a padded input is gathered element by element.
// Any other permutation is such a swap (the output's last axis brought last) followed by a view copy.
#include <algorithm>
#include <array>
#include <vector>

#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

struct TransposeArgs {
  std::uint64_t m = 1, n = 1;  // the input's last two dims
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;
  Layout yl;
  // Where the matrices are in x: row r of matrix b starts at offset + b * batch + r * pitch (0: packed, n and m * n).
  std::uint64_t offset = 0, pitch = 0, batch = 0;
};

void transpose_kernel(Core& core, const TransposeArgs& a) {
  const std::size_t chunk = tiling::fit_elements(core, 6);
  auto staging = core.ldm().alloc<f16>(chunk + 2);
  const bool flat = a.xl.only_tail_padded();
  const std::size_t rows_per_read = std::max<std::size_t>(1, (chunk + 2) / tiling::block_buffer_elements(1, 1));
  const std::uint64_t m = a.m, n = a.n;
  const std::uint64_t pitch = a.pitch == 0 ? n : a.pitch, batch = a.batch == 0 ? m * n : a.batch;
  tiling::write_gathered_tiles(
      core, a.y, a.yl,
      [&](std::size_t first, std::size_t last, LdmSpan<f16>, LdmSpan<f16> logical) {
        for (std::size_t at = first; at < last;) {
          // Output element at = ((b * n) + col) * m + row holds input ((b * m) + row) * n + col.
          const std::uint64_t b = at / (m * n), col = (at / m) % n, row0 = at % m;
          const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(m - row0, last - at));
          f16* out = logical.data() + (at - first);
          const std::uint64_t source = a.offset + b * batch + row0 * pitch + col;
          // Whole output rows of this matrix available from here, and how many one read can hold.
          const std::uint64_t whole = row0 == 0 ? std::min<std::uint64_t>((last - at) / m, n - col) : 0;
          const std::uint64_t fit = (chunk + 2) / m >= 4 ? tiling::floor_even((chunk + 2) / m - 2) : 0;
          if (flat && std::min(whole, fit) >= 2) {
            const auto k = static_cast<std::size_t>(std::min(whole, fit));
            auto read = tiling::get_block(core, staging, a.x, a.xl.total,
                                          {.first = a.offset + b * batch + col, .pitch = pitch, .rows = m, .count = k});
            read.wait();
            for (std::size_t r = 0; r < m; ++r) {
              const f16* run = staging.data() + read.start(r);
              for (std::size_t j = 0; j < k; ++j) out[j * m + r] = run[j];
            }
            at += k * m;
            continue;
          }
          if (flat) {
            for (std::size_t done = 0; done < count; done += rows_per_read) {
              const std::size_t rows = std::min(rows_per_read, count - done);
              auto read = tiling::get_block(core, staging, a.x, a.xl.total,
                                            {.first = source + done * pitch, .pitch = pitch, .rows = rows, .count = 1});
              read.wait();
              for (std::size_t r = 0; r < rows; ++r) out[done + r] = staging.data()[read.start(r)];
            }
          } else {
            for (std::size_t r = 0; r < count; ++r) {
              tiling::gather(core, staging, a.x, a.xl, source + r * pitch, 1, out + r);
            }
          }
          at += count;
        }
      },
      // Shares of a streaming copy's size: a [12, 128, 64] transpose on sw26010pro takes 13.2k cycles with them,
      // 80k with shares of 256 (k = 2 columns per read: 4-byte runs).
      tiling::kStreamingShare);
}

/// A permutation reduced to what moves: size-1 axes dropped and axes that stay neighbours merged.
struct ReducedPermutation {
  std::vector<std::uint64_t> dims;  ///< the merged input axes, in input order
  std::vector<std::size_t> perm;    ///< output axis d is merged input axis perm[d]
};

ReducedPermutation reduce(const Shape& x, std::span<const std::size_t> perm) {
  // Input axes kept (size > 1), renumbered in input order.
  std::vector<std::size_t> kept_perm;
  std::vector<std::uint64_t> kept_dims;
  std::vector<std::size_t> number(x.rank(), 0);
  for (std::size_t d = 0; d < x.rank(); ++d) {
    if (x[d] == 1) continue;
    number[d] = kept_dims.size();
    kept_dims.push_back(x[d]);
  }
  for (const std::size_t p : perm) {
    if (x[p] != 1) kept_perm.push_back(number[p]);
  }
  // Merge input axis i + 1 into i wherever the output takes them one after the other.
  ReducedPermutation out;
  std::vector<std::size_t> group_of(kept_dims.size());
  std::vector<bool> starts(kept_dims.size(), true);
  for (std::size_t d = 1; d < kept_perm.size(); ++d) {
    if (kept_perm[d] == kept_perm[d - 1] + 1) starts[kept_perm[d]] = false;
  }
  for (std::size_t i = 0; i < kept_dims.size(); ++i) {
    if (starts[i]) {
      out.dims.push_back(kept_dims[i]);
    } else {
      out.dims.back() *= kept_dims[i];
    }
    group_of[i] = out.dims.size() - 1;
  }
  for (std::size_t d = 0; d < kept_perm.size(); ++d) {
    if (starts[kept_perm[d]]) out.perm.push_back(group_of[kept_perm[d]]);
  }
  return out;
}

/// How a transpose runs: a copy of a view whose last axis is the input's (runs of the input), a batched swap of
/// the last two axes (strided reads transposed in ldm), or a swap that brings the output's last axis last followed
/// by a view copy.
enum class TransposePlan : std::uint8_t { kView, kSwap, kSwapThenView };

class TransposeOp final : public BoundOp {
 public:
  TransposeOp(Shape x, Shape y, std::vector<std::size_t> perm)
      : BoundOp({std::move(x)}, {std::move(y)}), perm_(std::move(perm)), reduced_(reduce(input_shapes()[0], perm_)) {
    const std::size_t k = reduced_.perm.size();
    if (k <= 1 || reduced_.perm.back() == k - 1) {
      plan_ = TransposePlan::kView;
    } else if (reduced_.perm.back() == k - 2 && reduced_.perm[k - 2] == k - 1 &&
               std::is_sorted(reduced_.perm.begin(), reduced_.perm.end() - 2)) {
      plan_ = TransposePlan::kSwap;
    } else {
      plan_ = TransposePlan::kSwapThenView;
    }
  }

  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  /// 32-bit elements: a word's two units stay innermost, so any permutation is a view copy of whole words.
  std::unique_ptr<BoundOp> with_element_type(DType type) const override {
    return ViewOp(input_shapes()[0], output_shapes()[0], permuted_view(reduced_.dims, reduced_.perm))
        .with_element_type(type);
  }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const DevicePtr<const f16> x(in[0].ptr);
    const auto& d = reduced_.dims;
    const std::size_t k = d.size();
    switch (plan_) {
      case TransposePlan::kView:
        run_view_copy(m, label, permuted_view(d, reduced_.perm), x, in[0].layout(), out[0].ptr, out[0].layout());
        return;
      case TransposePlan::kSwap:
        launch_all(m, label, transpose_kernel,
                   TransposeArgs{d[k - 2], d[k - 1], x, in[0].layout(), out[0].ptr, out[0].layout()});
        return;
      case TransposePlan::kSwapThenView: {
        // Swap input axis a (the output's last) with the axes after it, then copy runs into the output's order.
        const std::size_t a = reduced_.perm.back();
        std::uint64_t after = 1;
        for (std::size_t i = a + 1; i < k; ++i) after *= d[i];
        const std::size_t total = tiling::ceil_even(in[0].layout().shape.elements());
        DeviceScratch scratch(m);
        const DevicePtr<f16> swapped = scratch.alloc<f16>(total, AllocOptions{.name = label + ":swapped"});
        const Layout sl =
            Layout::natural(Shape4::from_dims({in[0].layout().shape.elements() / (d[a] * after), after, d[a]}));
        Layout swapped_layout = sl;
        swapped_layout.total = total;
        launch_all(m, label + ":swap", transpose_kernel,
                   TransposeArgs{d[a], after, x, in[0].layout(), swapped, swapped_layout});
        // The swapped tensor's axes: input axes but a in order, then a.
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < k; ++i) {
          if (i != a) order.push_back(i);
        }
        order.push_back(a);
        std::vector<std::uint64_t> swapped_dims;
        std::vector<std::size_t> position(k);
        for (std::size_t j = 0; j < k; ++j) {
          swapped_dims.push_back(d[order[j]]);
          position[order[j]] = j;
        }
        std::vector<std::size_t> perm;
        for (const std::size_t p : reduced_.perm) perm.push_back(position[p]);
        run_view_copy(m, label, permuted_view(swapped_dims, perm), DevicePtr<const f16>(swapped), swapped_layout,
                      out[0].ptr, out[0].layout());
        return;
      }
    }
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    // Coordinate by coordinate over the full-rank permutation (not the reduced one the kernels use).
    const Shape& x = input_shapes()[0];
    const Shape& y = output_shapes()[0];
    std::vector<std::uint64_t> x_strides(x.rank(), 1);
    for (std::size_t d = x.rank(); d-- > 1;) x_strides[d - 1] = x_strides[d] * x[d];
    HostTensor out{y, std::vector<float>(y.elements())};
    for (std::uint64_t i = 0; i < y.elements(); ++i) {
      std::uint64_t rest = i, source = 0;
      for (std::size_t d = y.rank(); d-- > 0;) {
        source += (rest % y[d]) * x_strides[perm_[d]];
        rest /= y[d];
      }
      out.data[i] = in[0].data[source];
    }
    return {out};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }
  /// The permutation when the transpose copies a view of its input (kView), else nullopt.
  std::optional<std::vector<std::size_t>> view_permutation() const {
    if (plan_ != TransposePlan::kView) return std::nullopt;
    return perm_;
  }
  /// {batches, m, n} when the transpose swaps the last two axes of [batches, m, n] (kSwap), else nullopt.
  std::optional<std::array<std::uint64_t, 3>> swapped_matrices() const {
    if (plan_ != TransposePlan::kSwap) return std::nullopt;
    const auto& d = reduced_.dims;
    const std::size_t k = d.size();
    std::uint64_t batches = 1;
    for (std::size_t i = 0; i + 2 < k; ++i) batches *= d[i];
    return std::array<std::uint64_t, 3>{batches, d[k - 2], d[k - 1]};
  }
  nlohmann::json run_metrics() const override {
    static constexpr const char* kNames[] = {"view", "swap", "swap-then-view"};
    return {{"transpose", kNames[static_cast<int>(plan_)]}};
  }

 private:
  std::vector<std::size_t> perm_;
  ReducedPermutation reduced_;
  TransposePlan plan_ = TransposePlan::kView;
};

/// A swap of the last two axes of matrices read in place from a view of a larger input (a slice of it): matrix b's
/// row r starts at element offset + b * batch + r * pitch of x.
class StridedSwapOp final : public BoundOp {
 public:
  StridedSwapOp(Shape x, Shape y, const StridedSwap& swap) : BoundOp({std::move(x)}, {std::move(y)}), swap_(swap) {}
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    launch_all(m, label, transpose_kernel,
               TransposeArgs{swap_.m, swap_.n, DevicePtr<const f16>(in[0].ptr), in[0].layout(), out[0].ptr,
                             out[0].layout(), swap_.offset, swap_.pitch, swap_.batch});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const StridedSwap& s = swap_;
    HostTensor out{output_shapes()[0], std::vector<float>(s.batches * s.m * s.n)};
    for (std::uint64_t b = 0; b < s.batches; ++b) {
      for (std::uint64_t col = 0; col < s.n; ++col) {
        for (std::uint64_t row = 0; row < s.m; ++row) {
          out.data[(b * s.n + col) * s.m + row] = in[0].data[s.offset + b * s.batch + row * s.pitch + col];
        }
      }
    }
    return {out};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }
  nlohmann::json run_metrics() const override { return {{"transpose", "swap"}}; }
  const StridedSwap& swap() const { return swap_; }

 private:
  StridedSwap swap_;
};

std::unique_ptr<BoundOp> bind_transpose(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"perm"});
  const Shape& x = in[0];
  const std::size_t rank = x.rank();
  if (rank < 1) reject(name, fmt::format("needs an input of rank >= 1, got {}", x.str()));
  std::vector<std::size_t> perm(rank);
  for (std::size_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;  // absent: reverse the axes (ONNX)
  if (const auto given = attrs.find("perm")) {
    const auto items = given->elements();
    if (items.size() != rank)
      reject(name, fmt::format("perm has {} entries for an input of rank {}", items.size(), rank));
    std::vector<bool> seen(rank, false);
    for (std::size_t d = 0; d < rank; ++d) {
      // Negative axes count from the end, as elsewhere in ONNX.
      const std::int64_t v = items[d].integer(-static_cast<std::int64_t>(rank), static_cast<std::int64_t>(rank) - 1);
      perm[d] = static_cast<std::size_t>(v < 0 ? v + static_cast<std::int64_t>(rank) : v);
      if (seen[perm[d]]) reject(name, fmt::format("perm names axis {} twice: it must be a permutation", perm[d]));
      seen[perm[d]] = true;
    }
  }
  std::vector<std::uint64_t> dims(rank);
  for (std::size_t d = 0; d < rank; ++d) dims[d] = x[perm[d]];
  return std::make_unique<TransposeOp>(x, Shape(dims), std::move(perm));
}

}  // namespace

std::optional<std::vector<std::size_t>> view_transpose_permutation(const BoundOp& op) {
  const auto* transpose = dynamic_cast<const TransposeOp*>(&op);
  return transpose == nullptr ? std::nullopt : transpose->view_permutation();
}

std::optional<std::array<std::uint64_t, 3>> swapped_matrices(const BoundOp& op) {
  const auto* transpose = dynamic_cast<const TransposeOp*>(&op);
  return transpose == nullptr ? std::nullopt : transpose->swapped_matrices();
}

std::unique_ptr<BoundOp> strided_swap(Shape x, Shape y, const StridedSwap& swap) {
  return std::make_unique<StridedSwapOp>(std::move(x), std::move(y), swap);
}

std::optional<StridedSwap> strided_swap_of(const BoundOp& op) {
  const auto* swap = dynamic_cast<const StridedSwapOp*>(&op);
  return swap == nullptr ? std::nullopt : std::optional<StridedSwap>(swap->swap());
}

void add_transpose_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("transpose", Arity{1, 1, 1}, bind_transpose));
}

}  // namespace ldmsim::ops
