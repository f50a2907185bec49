// The strided view copy (see view_copy.hpp). Each core writes its destination tiles of the output
// (write_gathered_tiles). Output rows (the last axis) that follow each other along the axis before it are read
// together when their input spans do not overlap: one block get of `rows` runs, `pitch` apart, each run the span
// of one row (its step included), so a transpose that keeps the last axis reads a tile in one strided request.
// Other rows are read span by span, in pieces of the staging buffer.
#include "view_copy.hpp"

#include <algorithm>
#include <stdexcept>

#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"

namespace ldmsim::ops {

std::uint64_t StridedView::elements() const {
  std::uint64_t n = 1;
  for (const std::uint64_t d : dims) n *= d;
  return n;
}

StridedView StridedView::canonical() const {
  StridedView out;
  out.offset = offset;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    const auto stride = strides[d];
    if (!out.dims.empty() && out.strides.back() == stride * static_cast<std::int64_t>(dims[d])) {
      out.dims.back() *= dims[d];  // the previous axis steps over exactly this one: they walk the input as one
      out.strides.back() = stride;
      continue;
    }
    out.dims.push_back(dims[d]);
    out.strides.push_back(stride);
  }
  if (out.dims.empty()) out.dims = {1}, out.strides = {1};
  return out;
}

StridedView StridedView::widened(std::size_t units) const {
  if (units == 1) return *this;
  StridedView w{dims, strides, offset * static_cast<std::int64_t>(units)};
  for (std::int64_t& s : w.strides) s *= static_cast<std::int64_t>(units);
  w.dims.push_back(units);
  w.strides.push_back(1);
  return w;
}

std::vector<std::int64_t> natural_strides(std::span<const std::uint64_t> dims) {
  std::vector<std::int64_t> natural(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) natural[d - 1] = natural[d] * static_cast<std::int64_t>(dims[d]);
  return natural;
}

StridedView permuted_view(std::span<const std::uint64_t> dims, std::span<const std::size_t> perm) {
  const std::vector<std::int64_t> natural = natural_strides(dims);
  StridedView v;
  for (const std::size_t p : perm) {
    v.dims.push_back(dims[p]);
    v.strides.push_back(natural[p]);
  }
  return v;
}

StridedView broadcast_view(const Shape& input, const Shape& output) {
  const auto strides = broadcast_strides(input, output);
  StridedView v;
  v.dims.assign(output.dims().begin(), output.dims().end());
  for (std::size_t d = 0; d < output.rank(); ++d) v.strides.push_back(static_cast<std::int64_t>(strides[d]));
  return v;
}

namespace {

struct ViewArgs {
  std::size_t rank = 1;
  std::array<std::uint64_t, kMaxViewRank> dims{};
  std::array<std::int64_t, kMaxViewRank> strides{};
  std::int64_t offset = 0;
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;
  Layout yl;
};

std::uint64_t magnitude(std::int64_t v) {
  return v < 0 ? static_cast<std::uint64_t>(-v) : static_cast<std::uint64_t>(v);
}

/// n elements `step` apart in ldm starting at `lowest` (the element of the lowest address), in the order of a
/// stride that is negative when `reversed`.
void pick(const f16* lowest, std::uint64_t step, bool reversed, std::uint64_t n, f16* out) {
  if (!reversed) {
    for (std::uint64_t j = 0; j < n; ++j) out[j] = lowest[j * step];
  } else {
    for (std::uint64_t j = 0; j < n; ++j) out[j] = lowest[(n - 1 - j) * step];
  }
}

}  // namespace

void read_strided_run(Core& core, DevicePtr<const f16> x, const Layout& xl, LdmSpan<f16> staging, std::int64_t start,
                      std::int64_t stride, std::uint64_t n, f16* out, std::source_location site) {
  if (!xl.only_tail_padded()) {  // padding inside the input (naive staging): logical runs through its layout
    if (stride == 1) {
      tiling::gather(core, staging, x, xl, static_cast<std::size_t>(start), n, out, site);
    } else {
      for (std::uint64_t j = 0; j < n; ++j) {
        tiling::gather(core, staging, x, xl, static_cast<std::size_t>(start + static_cast<std::int64_t>(j) * stride), 1,
                       out + j, site);
      }
    }
    return;
  }
  const std::uint64_t step = magnitude(stride);
  if (step == 0) {  // a broadcast row: one element repeated
    auto read = tiling::get_range(core, staging, x, xl.total,
                                  {static_cast<std::size_t>(start), static_cast<std::size_t>(start) + 1}, site);
    read.handle.wait();
    std::fill_n(out, n, staging.data()[read.first]);
    return;
  }
  // Columns whose span (with the 2 elements a widened read may add) fits the staging buffer.
  const std::uint64_t cols = (staging.size() - 3) / step + 1;
  for (std::uint64_t j0 = 0; j0 < n; j0 += cols) {
    const std::uint64_t c = std::min(cols, n - j0);
    const std::int64_t first = start + static_cast<std::int64_t>(j0) * stride;
    const std::int64_t lowest = stride > 0 ? first : first + static_cast<std::int64_t>(c - 1) * stride;
    const auto lo = static_cast<std::size_t>(lowest);
    auto read = tiling::get_range(core, staging, x, xl.total, {lo, lo + (c - 1) * step + 1}, site);
    read.handle.wait();
    pick(staging.data() + read.first, step, stride < 0, c, out + j0);
  }
}

namespace {

void view_copy_kernel(Core& core, const ViewArgs& a) {
  const std::size_t r = a.rank;
  const std::uint64_t len = a.dims[r - 1];
  const std::int64_t stride = a.strides[r - 1];
  const std::uint64_t step = magnitude(stride);
  const std::uint64_t span = step == 0 ? 1 : (len - 1) * step + 1;  // input elements one whole row covers
  const bool flat = a.xl.only_tail_padded();
  tiling::write_gathered_tiles(
      core, a.y, a.yl,
      [&](std::size_t first, std::size_t last, LdmSpan<f16> staging, LdmSpan<f16> logical) {
        for (std::size_t at = first; at < last;) {
          const std::uint64_t row = at / len, col = at % len;
          std::int64_t row_at = a.offset;  // input element of the row's column 0
          std::uint64_t rest = row, along = 0;
          for (std::size_t d = r - 1; d-- > 0;) {
            const std::uint64_t c = rest % a.dims[d];
            rest /= a.dims[d];
            row_at += static_cast<std::int64_t>(c) * a.strides[d];
            if (d == r - 2) along = c;
          }
          f16* out = logical.data() + (at - first);
          if (col == 0 && r >= 2 && flat) {
            // Whole rows that follow this one along axis r - 2, in this tile, read as one block.
            const std::int64_t pitch = a.strides[r - 2];
            const std::uint64_t rows = std::min<std::uint64_t>(a.dims[r - 2] - along, (last - at) / len);
            const std::uint64_t fit = staging.size() / tiling::block_buffer_elements(1, span);
            const std::uint64_t k = std::min(rows, fit);
            if (k >= 2 && pitch > 0 && magnitude(pitch) >= span) {
              const std::int64_t lowest = stride >= 0 ? row_at : row_at + static_cast<std::int64_t>(len - 1) * stride;
              auto read = tiling::get_block(core, staging, a.x, a.xl.total,
                                            {.first = static_cast<std::size_t>(lowest),
                                             .pitch = static_cast<std::size_t>(pitch),
                                             .rows = k,
                                             .count = span});
              read.wait();
              for (std::uint64_t q = 0; q < k; ++q) {
                pick(staging.data() + read.start(q), std::max<std::uint64_t>(step, 1), stride < 0, step == 0 ? 1 : len,
                     out + q * len);
                if (step == 0) std::fill_n(out + q * len + 1, len - 1, out[q * len]);
              }
              at += k * len;
              continue;
            }
          }
          const std::uint64_t n = std::min<std::uint64_t>(len - col, last - at);
          read_strided_run(core, a.x, a.xl, staging, row_at + static_cast<std::int64_t>(col) * stride, stride, n, out);
          at += n;
        }
      },
      tiling::kStreamingShare);
}

}  // namespace

void run_view_copy(Machine& machine, const std::string& label, const StridedView& view, DevicePtr<const f16> x,
                   const Layout& xl, DevicePtr<f16> y, const Layout& yl) {
  const StridedView v = view.canonical();
  if (v.dims.size() > kMaxViewRank) throw std::logic_error("run_view_copy: more than 7 axes");
  ViewArgs a{.rank = v.dims.size(), .offset = v.offset, .x = x, .xl = xl, .y = y, .yl = yl};
  std::copy(v.dims.begin(), v.dims.end(), a.dims.begin());
  std::copy(v.strides.begin(), v.strides.end(), a.strides.begin());
  launch_all(machine, label, view_copy_kernel, a);
}

std::vector<float> view_reference(const StridedView& view, std::span<const float> x) {
  std::vector<float> y(view.elements());
  for (std::uint64_t i = 0; i < y.size(); ++i) {
    std::int64_t at = view.offset;
    std::uint64_t rest = i;
    for (std::size_t d = view.dims.size(); d-- > 0;) {
      at += static_cast<std::int64_t>(rest % view.dims[d]) * view.strides[d];
      rest /= view.dims[d];
    }
    y[i] = x[static_cast<std::size_t>(at)];
  }
  return y;
}

}  // namespace ldmsim::ops
