// reduce_sum, reduce_mean, reduce_max, reduce_min over a block of adjacent axes (ONNX ReduceSum/Mean/Max/Min with
// keepdims), on the view [outer, reduced, inner]. Each core writes its share of the output in destination tiles
// (write_gathered_tiles). With inner == 1 (trailing axes: LayerNorm's and softmax's statistics) an output element's
// inputs are one contiguous run, gathered in chunks of the free ldm; otherwise a tile's outputs of one outer index
// are a run of inner positions, and each reduced index contributes one gathered run of them. Accumulation in fp32.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"
#include "ops.hpp"
#include "reduction_math.hpp"

namespace ldmsim::ops {

namespace {

using Reduction = ReduceMode;

/// [outer, reduced, inner]: the input as the reduction sees it.
struct ReduceView {
  std::uint64_t outer = 1, reduced = 1, inner = 1;
};

struct ReduceArgs {
  Reduction op;
  ReduceView v;
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;
  Layout yl;
};

/// What a core's reduction works in: a staging buffer and a buffer of gathered values (`chunk` elements each) in
/// ldm, their float image, and whether the input has only tail padding (logical index == buffer offset).
struct ReduceBuffers {
  std::size_t chunk = 0;
  LdmSpan<f16> staging;
  LdmSpan<f16> values;
  std::vector<float> xs;
  bool flat = false;
};

/// inner == 1, rows of at most half a chunk: consecutive outputs' rows are one contiguous input run, gathered
/// several rows at a time.
void reduce_short_rows(Core& core, const ReduceArgs& a, ReduceBuffers& b, std::size_t first, std::size_t last,
                       float* acc) {
  const auto len = static_cast<std::size_t>(a.v.reduced);
  const std::size_t rows_per = b.chunk / len;
  for (std::size_t o0 = first; o0 < last; o0 += rows_per) {
    const std::size_t rows = std::min(rows_per, last - o0);
    gather_floats(core, b.staging, a.x, a.xl, o0 * len, rows * len, b.xs.data());
    for (std::size_t r = 0; r < rows; ++r) {
      float partial = initial(a.op);
      for (std::size_t i = 0; i < len; ++i) partial = combine(a.op, partial, b.xs[r * len + i]);
      acc[o0 + r - first] = partial;
    }
    core.compute({.flops = rows * len});
  }
}

/// inner == 1, longer rows: each row gathered in chunks, each chunk reduced in fp32 and the chunks' results
/// combined in double (a sum of millions of terms keeps its precision).
void reduce_long_rows(Core& core, const ReduceArgs& a, ReduceBuffers& b, std::size_t first, std::size_t last,
                      float* acc) {
  const std::uint64_t reduced = a.v.reduced;
  for (std::size_t o = first; o < last; ++o) {
    double total = initial(a.op);
    for (std::uint64_t done = 0; done < reduced; done += b.chunk) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(b.chunk, reduced - done));
      gather_floats(core, b.staging, a.x, a.xl, o * reduced + done, n, b.xs.data());
      float partial = initial(a.op);
      for (std::size_t i = 0; i < n; ++i) partial = combine(a.op, partial, b.xs[i]);
      total = combine<double>(a.op, total, partial);
      core.compute({.flops = n});
    }
    acc[o - first] = static_cast<float>(total);
  }
}

/// inner > 1: outputs [first, last) cover runs of inner positions [j0, j1) of outer indices o; each reduced index
/// contributes one run, read with the other reduced rows as strided blocks (gathered one by one from a padded
/// layout).
void reduce_middle_axis(Core& core, const ReduceArgs& a, ReduceBuffers& b, std::size_t first, std::size_t last,
                        float* acc) {
  const std::uint64_t inner = a.v.inner, reduced = a.v.reduced;
  const std::size_t piece_max = std::max<std::size_t>(2, b.chunk - 2);  // a run and its widening fit staging
  for (std::size_t at = first; at < last;) {
    const std::uint64_t o = at / inner, j0 = at % inner;
    const std::uint64_t j1 = std::min<std::uint64_t>(inner, j0 + (last - at));
    for (std::uint64_t piece = j0; piece < j1; piece += piece_max) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(piece_max, j1 - piece));
      float* out = acc + (o * inner + piece - first);
      const auto add_run = [&](LdmSpan<f16> buf, std::size_t start) {
        to_floats(buf, start, n, b.xs.data());
        for (std::size_t i = 0; i < n; ++i) out[i] = combine(a.op, out[i], b.xs[i]);
        core.compute({.flops = n});
      };
      if (b.flat) {
        const std::size_t rows_per = std::max<std::size_t>(1, (b.chunk + 2) / (tiling::ceil_even(n) + 2));
        for (std::uint64_t r0 = 0; r0 < reduced; r0 += rows_per) {
          const auto rows = static_cast<std::size_t>(std::min<std::uint64_t>(rows_per, reduced - r0));
          auto read = tiling::get_block(
              core, b.staging, a.x, a.xl.total,
              {.first = (o * reduced + r0) * inner + piece, .pitch = inner, .rows = rows, .count = n});
          read.wait();
          for (std::size_t r = 0; r < rows; ++r) add_run(b.staging, read.start(r));
        }
      } else {
        for (std::uint64_t r = 0; r < reduced; ++r) {
          tiling::gather(core, b.staging, a.x, a.xl, (o * reduced + r) * inner + piece, n, b.values.data());
          add_run(b.values, 0);
        }
      }
    }
    at += static_cast<std::size_t>(j1 - j0);
  }
}

void reduce_kernel(Core& core, const ReduceArgs& a) {
  // Inputs are gathered through their own staging buffer (write_gathered_tiles' staging is sized for the output
  // tiles, which are small here): as large as the free ldm allows next to its four buffers.
  ReduceBuffers b;
  b.chunk = tiling::fit_elements(core, 6);
  b.staging = core.ldm().alloc<f16>(b.chunk + 2);
  b.values = core.ldm().alloc<f16>(b.chunk);
  b.xs.resize(b.chunk);
  b.flat = a.xl.only_tail_padded();
  std::vector<float> acc;
  const std::uint64_t reduced = a.v.reduced;
  tiling::write_gathered_tiles(
      core, a.y, a.yl,
      [&](std::size_t first, std::size_t last, LdmSpan<f16>, LdmSpan<f16> logical) {
        acc.assign(last - first, initial(a.op));
        if (a.v.inner > 1) {
          reduce_middle_axis(core, a, b, first, last, acc.data());
        } else if (reduced <= b.chunk / 2) {
          reduce_short_rows(core, a, b, first, last, acc.data());
        } else {
          reduce_long_rows(core, a, b, first, last, acc.data());
        }
        if (a.op == Reduction::kMean) {
          const float scale = 1.0f / static_cast<float>(reduced);
          for (float& v : acc) v *= scale;
          core.compute({.flops = acc.size()});
        }
        to_halves(acc.data(), acc.size(), logical);
      },
      // A share's cost is its outputs times the reduced length: aim for kStreamingShare input elements per core.
      std::max<std::size_t>(2, tiling::kStreamingShare / std::max<std::uint64_t>(1, reduced)));
}

class ReduceOp final : public BoundOp {
 public:
  ReduceOp(Reduction op, Shape x, Shape y, ReduceView v, std::size_t first, std::size_t last, bool keepdims)
      : BoundOp({std::move(x)}, {std::move(y)}), op_(op), v_(v), first_(first), last_(last), keepdims_(keepdims) {}

  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    launch_all(m, label, reduce_kernel,
               ReduceArgs{op_, v_, DevicePtr<const f16>(in[0].ptr), in[0].layout(), out[0].ptr, out[0].layout()});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& y = output_shapes()[0];
    HostTensor out{y, std::vector<float>(y.elements())};
    for (std::uint64_t o = 0; o < v_.outer; ++o) {
      for (std::uint64_t j = 0; j < v_.inner; ++j) {
        double acc = op_ == Reduction::kMax   ? -std::numeric_limits<double>::infinity()
                     : op_ == Reduction::kMin ? std::numeric_limits<double>::infinity()
                                              : 0.0;
        for (std::uint64_t r = 0; r < v_.reduced; ++r) {
          const double v = in[0].data[(o * v_.reduced + r) * v_.inner + j];
          acc = combine(op_, acc, v);
        }
        if (op_ == Reduction::kMean) acc /= static_cast<double>(v_.reduced);
        out.data[o * v_.inner + j] = static_cast<float>(acc);
      }
    }
    return {out};
  }
  OpCost cost() const override { return {input_shapes()[0].elements(), 0}; }
  FusionForm fusion_form() const override {
    if (v_.reduced == 1 && !keepdims_) return {};  // drops axes without reducing: its dims do not align
    if (v_.reduced == 1) {                         // nothing to combine: the output is its input in the same order
      return FusionForm{.kind = FusionForm::Kind::kPointwise, .fn = [](float a, float) { return a; }, .flops = 0};
    }
    return FusionForm{
        .kind = FusionForm::Kind::kReduce, .mode = op_, .axis_begin = first_, .axis_end = last_, .keepdims = keepdims_};
  }
  Tolerance tolerance() const override {
    // max and min select: one fp16 rounding; sums accumulate in fp32 and round once.
    return op_ == Reduction::kMax || op_ == Reduction::kMin ? Tolerance{0.0, 1.0 / 1024} : Tolerance{2e-3, 1.0 / 512};
  }

 private:
  Reduction op_;
  ReduceView v_;
  std::size_t first_, last_;
  bool keepdims_;
};

template <Reduction kOp>
std::unique_ptr<BoundOp> bind_reduce(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"axes", "keepdims"});
  const Shape& x = in[0];
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::vector<bool> reduced(x.rank(), false);
  if (const auto axes = attrs.find("axes")) {
    const auto items = axes->elements();
    if (items.empty()) reject(name, "axes is empty (omit it to reduce over every axis)");
    for (const auto& item : items) {
      std::int64_t axis = item.integer(-rank, rank - 1);
      if (axis < 0) axis += rank;
      if (reduced[static_cast<std::size_t>(axis)]) reject(name, fmt::format("axis {} is listed twice", axis));
      reduced[static_cast<std::size_t>(axis)] = true;
    }
  } else {
    std::fill(reduced.begin(), reduced.end(), true);
  }
  const bool keepdims = int_attr(attrs, "keepdims", 1, 0, 1) == 1;
  // Axes of size 1 move no data: only the others must form one block ([2, 1, 3] over axes 0 and 2 is [1, 6]).
  std::vector<bool> moving(x.rank());
  for (std::size_t d = 0; d < x.rank(); ++d) moving[d] = reduced[d] && x[d] > 1;
  const auto first = static_cast<std::size_t>(std::find(moving.begin(), moving.end(), true) - moving.begin());
  const auto last = static_cast<std::size_t>(moving.rend() - std::find(moving.rbegin(), moving.rend(), true));
  for (std::size_t d = first; d < last; ++d) {
    if (!reduced[d] && x[d] > 1) {
      reject(name, fmt::format("reduces axes that are not adjacent in {}; reduce one block of adjacent axes at a time",
                               x.str()));
    }
  }
  // Nothing to combine (a rank-0 input, or only axes of size 1): every output is its one input.
  const ReduceView v = first == x.rank()
                           ? ReduceView{x.elements(), 1, 1}
                           : ReduceView{x.product(0, first), x.product(first, last), x.product(last, x.rank())};
  std::vector<std::uint64_t> dims;
  for (std::size_t d = 0; d < x.rank(); ++d) {
    if (!reduced[d]) {
      dims.push_back(x[d]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return std::make_unique<ReduceOp>(kOp, x, Shape(dims), v, first, last, keepdims);
}

}  // namespace

void add_reduce_kinds(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("reduce_sum", Arity{1, 1, 1}, bind_reduce<Reduction::kSum>));
  registry.add(std::make_unique<FunctionKind>("reduce_mean", Arity{1, 1, 1}, bind_reduce<Reduction::kMean>));
  registry.add(std::make_unique<FunctionKind>("reduce_max", Arity{1, 1, 1}, bind_reduce<Reduction::kMax>));
  registry.add(std::make_unique<FunctionKind>("reduce_min", Arity{1, 1, 1}, bind_reduce<Reduction::kMin>));
}

}  // namespace ldmsim::ops
