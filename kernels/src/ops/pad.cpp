// pad: ONNX Pad with constant (a value), reflect (mirrored without repeating the edge) or edge (the edge repeated)
// modes, pads given per axis as [begin..., end...]. Each core writes its destination tiles of the output. An output
// row (the last axis) comes from one input row or, in constant mode past an edge, from nothing. Whole output rows
// whose input rows follow one another are read as one block and built in ldm (their padded columns come from the
// row itself); other rows are built from at most three runs of their input row (left pad, interior, right pad),
// each a strided run of stride 1, -1 or 0.
#include <algorithm>
#include <vector>

#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

enum class PadMode : std::uint8_t { kConstant, kReflect, kEdge };

struct PadGeometry {
  std::size_t rank = 1;
  std::array<std::uint64_t, Shape::kMaxRank> in{}, begin{}, out{};
  PadMode mode = PadMode::kConstant;
  f16 value{};

  /// The input coordinate of output coordinate o on axis d, or -1 (constant mode, in the padding).
  std::int64_t source(std::size_t d, std::uint64_t o) const {
    const auto i = static_cast<std::int64_t>(o) - static_cast<std::int64_t>(begin[d]);
    const auto n = static_cast<std::int64_t>(in[d]);
    if (i >= 0 && i < n) return i;
    switch (mode) {
      case PadMode::kConstant:
        return -1;
      case PadMode::kEdge:
        return i < 0 ? 0 : n - 1;
      case PadMode::kReflect:
        return i < 0 ? -i : 2 * (n - 1) - i;  // pads are below the axis size: one reflection suffices
    }
    return -1;
  }
};

struct PadArgs {
  PadGeometry g;
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;
  Layout yl;
};

/// Output columns [c0, c1) of a row whose input row starts at input element `row_at`: the left pad, the interior
/// and the right pad, each a run of the input row of stride -1 (reflect), 0 (edge) or 1, or the value.
template <typename Run>
void for_each_segment(const PadGeometry& g, std::uint64_t c0, std::uint64_t c1, Run&& run) {
  const std::size_t d = g.rank - 1;
  const auto b = static_cast<std::int64_t>(g.begin[d]), len = static_cast<std::int64_t>(g.in[d]);
  const std::uint64_t cuts[] = {0, g.begin[d], g.begin[d] + g.in[d], g.out[d]};
  for (int s = 0; s < 3; ++s) {
    const std::uint64_t lo = std::max(c0, cuts[s]), hi = std::min(c1, cuts[s + 1]);
    if (lo >= hi) continue;
    const auto o = static_cast<std::int64_t>(lo);
    if (s == 1) {
      run(lo, hi - lo, o - b, std::int64_t{1});
    } else if (g.mode == PadMode::kConstant) {
      run(lo, hi - lo, std::int64_t{-1}, std::int64_t{0});
    } else if (g.mode == PadMode::kEdge) {
      run(lo, hi - lo, s == 0 ? std::int64_t{0} : len - 1, std::int64_t{0});
    } else {
      run(lo, hi - lo, s == 0 ? b - o : 2 * (len - 1) - (o - b), std::int64_t{-1});
    }
  }
}

void pad_kernel(Core& core, const PadArgs& a) {
  const PadGeometry& g = a.g;
  const std::size_t r = g.rank;
  const std::uint64_t out_len = g.out[r - 1], in_len = g.in[r - 1];
  const bool flat = a.xl.only_tail_padded();
  tiling::write_gathered_tiles(
      core, a.y, a.yl,
      [&](std::size_t first, std::size_t last, LdmSpan<f16> staging, LdmSpan<f16> logical) {
        for (std::size_t at = first; at < last;) {
          const std::uint64_t row = at / out_len, col = at % out_len;
          // The input row's first element, or none (a constant row); and the output coordinate along axis r - 2.
          std::int64_t row_at = 0, stride = static_cast<std::int64_t>(in_len);
          bool constant_row = false;
          std::uint64_t rest = row, along = 0;
          for (std::size_t d = r - 1; d-- > 0;) {
            const std::uint64_t o = rest % g.out[d];
            rest /= g.out[d];
            const std::int64_t i = g.source(d, o);
            constant_row = constant_row || i < 0;
            row_at += i * stride;
            stride *= static_cast<std::int64_t>(g.in[d]);
            if (d == r - 2) along = o;
          }
          f16* out = logical.data() + (at - first);
          const std::uint64_t n = std::min<std::uint64_t>(out_len - col, last - at);
          if (constant_row) {
            std::fill_n(out, n, g.value);
            at += n;
            continue;
          }
          // Whole rows from interior input rows that follow each other along axis r - 2: one block read.
          if (col == 0 && r >= 2 && flat) {
            const std::uint64_t interior_end = g.begin[r - 2] + g.in[r - 2];
            const std::uint64_t rows = along >= g.begin[r - 2] && along < interior_end
                                           ? std::min<std::uint64_t>(interior_end - along, (last - at) / out_len)
                                           : 0;
            const std::uint64_t k =
                std::min<std::uint64_t>(rows, staging.size() / tiling::block_buffer_elements(1, in_len));
            if (k >= 2) {
              auto read = tiling::get_block(
                  core, staging, a.x, a.xl.total,
                  {.first = static_cast<std::size_t>(row_at), .pitch = in_len, .rows = k, .count = in_len});
              read.wait();
              for (std::uint64_t q = 0; q < k; ++q) {
                const f16* src = staging.data() + read.start(q);
                f16* dst = out + q * out_len;
                for_each_segment(
                    g, 0, out_len, [&](std::uint64_t o, std::uint64_t count, std::int64_t from, std::int64_t step) {
                      for (std::uint64_t j = 0; j < count; ++j) {
                        dst[o + j] = from < 0 && step == 0 ? g.value : src[from + static_cast<std::int64_t>(j) * step];
                      }
                    });
              }
              at += k * out_len;
              continue;
            }
          }
          for_each_segment(g, col, col + n,
                           [&](std::uint64_t o, std::uint64_t count, std::int64_t from, std::int64_t step) {
                             f16* dst = out + (o - col);
                             if (from < 0 && step == 0) {
                               std::fill_n(dst, count, g.value);
                             } else {
                               read_strided_run(core, a.x, a.xl, staging, row_at + from, step, count, dst);
                             }
                           });
          at += n;
        }
      },
      tiling::kStreamingShare);
}

class PadOp final : public BoundOp {
 public:
  PadOp(Shape x, Shape y, PadGeometry g, float value) : BoundOp({std::move(x)}, {std::move(y)}), g_(g), value_(value) {}

  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    launch_all(m, label, pad_kernel,
               PadArgs{g_, DevicePtr<const f16>(in[0].ptr), in[0].layout(), out[0].ptr, out[0].layout()});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    // Element by element with numpy's rules for each mode (an independent mapping from the kernel's segments).
    const Shape& x = input_shapes()[0];
    const Shape& y = output_shapes()[0];
    HostTensor out{y, std::vector<float>(y.elements())};
    for (std::uint64_t e = 0; e < y.elements(); ++e) {
      std::uint64_t rest = e, source = 0, scale = 1;
      bool outside = false;
      for (std::size_t d = y.rank(); d-- > 0;) {
        std::int64_t i = static_cast<std::int64_t>(rest % y[d]) - static_cast<std::int64_t>(g_.begin[d]);
        rest /= y[d];
        const auto n = static_cast<std::int64_t>(x[d]);
        if (i < 0 || i >= n) {
          if (g_.mode == PadMode::kConstant) outside = true;
          if (g_.mode == PadMode::kEdge) i = std::clamp<std::int64_t>(i, 0, n - 1);
          if (g_.mode == PadMode::kReflect) i = i < 0 ? -i : (n - 1) - (i - (n - 1));
        }
        source += static_cast<std::uint64_t>(std::max<std::int64_t>(i, 0)) * scale;
        scale *= x[d];
      }
      out.data[e] = outside ? value_ : in[0].data[source];
    }
    return {out};
  }
  OpCost cost() const override { return {0, 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }

 private:
  PadGeometry g_;
  float value_;
};

std::unique_ptr<BoundOp> bind_pad(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"pads", "mode", "value"});
  const Shape& x = in[0];
  const std::size_t rank = x.rank();
  if (rank == 0) reject(name, "cannot pad a scalar");
  const auto field = attrs.find("pads");
  if (!field) reject(name, "needs attribute pads ([begin of each axis..., end of each axis...])");
  const auto items = field->elements();
  if (items.size() != 2 * rank) {
    field->fail(
        fmt::format("has {} entries; an input of rank {} needs {} (begins, then ends)", items.size(), rank, 2 * rank));
  }
  PadGeometry g;
  g.rank = rank;
  const std::string mode = attrs.has("mode") ? attrs.at("mode").string() : "constant";
  if (mode == "constant") {
    g.mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    g.mode = PadMode::kReflect;
  } else if (mode == "edge") {
    g.mode = PadMode::kEdge;
  } else {
    attrs.at("mode").fail(fmt::format("must be \"constant\", \"reflect\" or \"edge\" (got \"{}\")", mode));
  }
  const double value = num_attr(attrs, "value", 0.0);
  if (!(std::abs(value) <= 65504.0)) reject(name, fmt::format("value {} is not a finite fp16 value", value));
  g.value = f16(static_cast<float>(value));
  std::vector<std::uint64_t> dims(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const std::uint64_t before = items[d].unsigned_integer(0, std::uint64_t{1} << 40);
    const std::uint64_t after = items[rank + d].unsigned_integer(0, std::uint64_t{1} << 40);
    if (g.mode == PadMode::kReflect && (before >= x[d] || after >= x[d]) && (before > 0 || after > 0)) {
      reject(name, fmt::format("reflect pads of axis {} ({} and {}) must be smaller than its size {}", d, before, after,
                               x[d]));
    }
    g.in[d] = x[d];
    g.begin[d] = before;
    dims[d] = checked_add(checked_add(x[d], before, "pad: output shape"), after, "pad: output shape");
    g.out[d] = dims[d];
  }
  return std::make_unique<PadOp>(x, Shape(dims, "pad output"), g, static_cast<float>(g.value));
}

}  // namespace

void add_pad_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("pad", Arity{1, 1, 1}, bind_pad));
}

}  // namespace ldmsim::ops
