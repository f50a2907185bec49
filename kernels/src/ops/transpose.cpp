// transpose of the last two axes ([..., M, N] -> [..., N, M]; ONNX Transpose with such a perm): each core writes its
// share of the output in destination tiles (write_gathered_tiles). Output rows (b, n) are input columns of matrix
// b: when the input has only tail padding, k whole output rows come from one strided read of M runs of k columns
// (k as large as the staging buffer allows) transposed in ldm; a partial row, or a matrix too tall for two columns,
// is read column by column as strided blocks of one element per row; a padded input is gathered element by element.
#include <algorithm>
#include <vector>

#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

struct TransposeArgs {
  std::uint64_t m = 1, n = 1;  // the input's last two dims
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;
  Layout yl;
};

void transpose_kernel(Core& core, const TransposeArgs& a) {
  const std::size_t chunk = tiling::fit_elements(core, 6);
  auto staging = core.ldm().alloc<f16>(chunk + 2);
  const bool flat = a.xl.only_tail_padded();
  const std::size_t rows_per_read = std::max<std::size_t>(1, (chunk + 2) / tiling::block_buffer_elements(1, 1));
  const std::uint64_t m = a.m, n = a.n;
  tiling::write_gathered_tiles(
      core, a.y, a.yl,
      [&](std::size_t first, std::size_t last, LdmSpan<f16>, LdmSpan<f16> logical) {
        for (std::size_t at = first; at < last;) {
          // Output element at = ((b * n) + col) * m + row holds input ((b * m) + row) * n + col.
          const std::uint64_t b = at / (m * n), col = (at / m) % n, row0 = at % m;
          const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(m - row0, last - at));
          f16* out = logical.data() + (at - first);
          const std::uint64_t source = (b * m + row0) * n + col;
          // Whole output rows of this matrix available from here, and how many one read can hold.
          const std::uint64_t whole = row0 == 0 ? std::min<std::uint64_t>((last - at) / m, n - col) : 0;
          const std::uint64_t fit = (chunk + 2) / m >= 4 ? tiling::floor_even((chunk + 2) / m - 2) : 0;
          if (flat && std::min(whole, fit) >= 2) {
            const auto k = static_cast<std::size_t>(std::min(whole, fit));
            auto read = tiling::get_block(core, staging, a.x, a.xl.total,
                                          {.first = b * m * n + col, .pitch = n, .rows = m, .count = k});
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
                                            {.first = source + done * n, .pitch = n, .rows = rows, .count = 1});
              read.wait();
              for (std::size_t r = 0; r < rows; ++r) out[done + r] = staging.data()[read.start(r)];
            }
          } else {
            for (std::size_t r = 0; r < count; ++r) {
              tiling::gather(core, staging, a.x, a.xl, source + r * n, 1, out + r);
            }
          }
          at += count;
        }
      },
      // Shares of a streaming copy's size: a [12, 128, 64] transpose on sw26010pro takes 13.2k cycles with them,
      // 80k with shares of 256 (k = 2 columns per read: 4-byte runs).
      tiling::kStreamingShare);
}

class TransposeOp final : public BoundOp {
 public:
  TransposeOp(Shape x, Shape y) : BoundOp({std::move(x)}, {std::move(y)}) {}

  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const Shape& x = input_shapes()[0];
    launch_all(m, label, transpose_kernel,
               TransposeArgs{x[x.rank() - 2], x[x.rank() - 1], DevicePtr<const f16>(in[0].ptr), in[0].layout(),
                             out[0].ptr, out[0].layout()});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& x = input_shapes()[0];
    const std::uint64_t m = x[x.rank() - 2], n = x[x.rank() - 1];
    HostTensor y{output_shapes()[0], std::vector<float>(x.elements())};
    for (std::uint64_t b = 0; b < x.elements() / (m * n); ++b)
      for (std::uint64_t i = 0; i < m; ++i)
        for (std::uint64_t j = 0; j < n; ++j) y.data[(b * n + j) * m + i] = in[0].data[(b * m + i) * n + j];
    return {y};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }
};

std::unique_ptr<BoundOp> bind_transpose(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"perm"});
  const Shape& x = in[0];
  const std::size_t rank = x.rank();
  if (rank < 2) reject(name, fmt::format("needs an input of rank >= 2, got {}", x.str()));
  std::vector<std::uint64_t> perm(rank);
  for (std::size_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;  // absent: reverse the axes (ONNX)
  if (const auto given = attrs.find("perm")) {
    const auto items = given->elements();
    if (items.size() != rank)
      reject(name, fmt::format("perm has {} entries for an input of rank {}", items.size(), rank));
    for (std::size_t d = 0; d < rank; ++d) perm[d] = items[d].unsigned_integer(0, rank - 1);
  }
  for (std::size_t d = 0; d + 2 < rank; ++d) {
    if (perm[d] != d) {
      reject(name, fmt::format("only the last two axes can be swapped (perm must be [0, ..., {}, {}, {}]); hint: "
                               "reshape so that the swapped axes are the last two",
                               rank - 3, rank - 1, rank - 2));
    }
  }
  if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2) {
    reject(name, fmt::format("perm must swap the last two axes (identity perms are not an op)"));
  }
  std::vector<std::uint64_t> dims(x.dims().begin(), x.dims().end());
  std::swap(dims[rank - 2], dims[rank - 1]);
  return std::make_unique<TransposeOp>(x, Shape(dims));
}

}  // namespace

void add_transpose_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("transpose", Arity{1, 1, 1}, bind_transpose));
}

}  // namespace ldmsim::ops
