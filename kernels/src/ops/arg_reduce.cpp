// arg_max, arg_min over one axis (ONNX ArgMax / ArgMin: keepdims, select_last_index), on the view [outer, reduced,
// inner]: the index along the axis of the largest (smallest) element, as an int32 tensor. A NaN counts as beyond
// every number, as numpy's and PyTorch's argmax and argmin take a NaN's index; of equal values the first index is
// taken, or the last with select_last_index. Each core owns a share of the output's elements: it reads the axis's
// values (innermost: each output's contiguous run, short ones several outputs at a time; otherwise one run of a
// tile's inner positions per index along the axis, those of several indices one strided block where the input is
// laid out flat) and writes its indices as 4-byte words.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

/// [outer, reduced, inner]: the input as the search sees it.
struct ArgView {
  std::uint64_t outer = 1, reduced = 1, inner = 1;
};

struct ArgArgs {
  bool max = true;
  bool last = false;  ///< select_last_index: ties go to the later index
  ArgView v;
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<f16> y;  ///< int32 words in a 1-D layout
};

/// Whether `v` (at a later index) takes the place of `best`.
bool replaces(const ArgArgs& a, float v, float best) {
  if (std::isnan(best)) return a.last && std::isnan(v);
  if (std::isnan(v)) return true;
  if (v == best) return a.last;
  return a.max ? v > best : v < best;
}

/// The search's state for one output element.
struct Best {
  float value = 0.0f;
  std::int32_t index = -1;
  void offer(const ArgArgs& a, float v, std::uint64_t at) {
    if (index < 0 || replaces(a, v, value)) value = v, index = static_cast<std::int32_t>(at);
  }
};

void arg_kernel(Core& core, const ArgArgs& a) {
  const std::uint64_t outputs = a.v.outer * a.v.inner, reduced = a.v.reduced, inner = a.v.inner;
  // A share's cost is its outputs times the axis's length: aim for kStreamingShare input elements per core.
  const tiling::Range share =
      tiling::my_share(core, static_cast<std::size_t>(outputs),
                       std::max<std::size_t>(
                           2, tiling::kStreamingShare / static_cast<std::size_t>(std::max<std::uint64_t>(1, reduced))));
  if (share.empty()) return;
  // Room for the staging buffer and the output words in ldm, and for what a core would hold there on hardware
  // that the host keeps beside it (the values as floats, each output's best value and index).
  const std::size_t chunk = tiling::fit_elements(core, 6);
  LdmSpan<f16> staging = core.ldm().alloc<f16>(chunk + 2);
  const std::size_t tile = std::max<std::size_t>(2, tiling::floor_even(chunk / 2));  // outputs: two units each
  LdmSpan<f16> words = core.ldm().alloc<f16>(2 * tile);
  std::vector<float> xs(chunk);
  std::vector<Best> best(tile);
  const bool flat = a.xl.only_tail_padded();  // logical index == buffer offset: strided block reads
  tiling::for_each_tile(share, tile, [&](tiling::Range t) {
    std::fill(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(t.size()), Best{});
    if (inner == 1 && reduced <= chunk / 2) {  // short rows, one per output: several gathered as one run
      const std::size_t rows_per = chunk / static_cast<std::size_t>(reduced);
      for (std::size_t o0 = t.begin; o0 < t.end; o0 += rows_per) {
        const std::size_t rows = std::min(rows_per, t.end - o0);
        const auto len = static_cast<std::size_t>(reduced);
        gather_floats(core, staging, a.x, a.xl, o0 * len, rows * len, xs.data());
        for (std::size_t r = 0; r < rows; ++r) {
          for (std::size_t i = 0; i < len; ++i) best[o0 - t.begin + r].offer(a, xs[r * len + i], i);
        }
        core.compute({.flops = rows * len});
      }
    } else if (inner == 1) {  // a long row per output: gathered in chunks
      for (std::size_t at = t.begin; at < t.end; ++at) {
        for (std::uint64_t done = 0; done < reduced; done += chunk) {
          const auto m = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, reduced - done));
          gather_floats(core, staging, a.x, a.xl, static_cast<std::size_t>(at * reduced + done), m, xs.data());
          for (std::size_t i = 0; i < m; ++i) best[at - t.begin].offer(a, xs[i], done + i);
          core.compute({.flops = m});
        }
      }
    } else {  // each index along the axis: one run of the tile's inner positions of one outer index (tile <= chunk)
      for (std::size_t at = t.begin; at < t.end;) {
        const std::uint64_t o = at / inner, j0 = at % inner;
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(inner - j0, t.end - at));
        const auto offer_run = [&](std::uint64_t r, const float* values) {
          for (std::size_t i = 0; i < n; ++i) best[at - t.begin + i].offer(a, values[i], r);
          core.compute({.flops = n});
        };
        if (flat) {  // the runs of several indices as one strided block read
          const std::size_t rows_per = std::max<std::size_t>(1, (chunk + 2) / (tiling::ceil_even(n) + 2));
          for (std::uint64_t r0 = 0; r0 < reduced; r0 += rows_per) {
            const auto rows = static_cast<std::size_t>(std::min<std::uint64_t>(rows_per, reduced - r0));
            auto read = tiling::get_block(core, staging, a.x, a.xl.total,
                                          {.first = static_cast<std::size_t>((o * reduced + r0) * inner + j0),
                                           .pitch = static_cast<std::size_t>(inner),
                                           .rows = rows,
                                           .count = n});
            read.wait();
            for (std::size_t r = 0; r < rows; ++r) {
              to_floats(staging, read.start(r), n, xs.data());
              offer_run(r0 + r, xs.data());
            }
          }
        } else {
          for (std::uint64_t r = 0; r < reduced; ++r) {
            gather_floats(core, staging, a.x, a.xl, static_cast<std::size_t>((o * reduced + r) * inner + j0), n,
                          xs.data());
            offer_run(r, xs.data());
          }
        }
        at += n;
      }
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto u = static_cast<std::uint32_t>(best[i].index);
      words[2 * i] = f16::from_bits(static_cast<std::uint16_t>(u & 0xffffu));
      words[2 * i + 1] = f16::from_bits(static_cast<std::uint16_t>(u >> 16));
    }
    tiling::put_range(core, a.y, words, tiling::Range{2 * t.begin, 2 * t.end}).wait();
  });
}

class ArgReduceOp final : public BoundOp {
 public:
  ArgReduceOp(bool max, bool last, Shape x, Shape y, ArgView v)
      : BoundOp({std::move(x)}, {std::move(y)}), max_(max), last_(last), v_(v) {
    set_dtypes({DType::kF16, DType::kI32});
  }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    // The kernel writes the indices in order: an output staged with padding inside (naive staging) is written to
    // its 1-D layout first and copied into place after.
    DeviceScratch scratch(m);
    const Shape& y = output_shapes()[0];
    const bool padded_inside = !out[0].layout().only_tail_padded();
    const PaddingPlan flat_plan = plan_one_d(unit_view(y, DType::kI32));
    const DeviceTensor flat = padded_inside ? scratch.tensor(label + ":flat_output", flat_plan) : out[0];
    launch_all(m, label, arg_kernel,
               ArgArgs{max_, last_, v_, DevicePtr<const f16>(in[0].ptr), in[0].layout(), flat.ptr});
    if (padded_inside) {
      run_view_copy(m, label + ":unflat", broadcast_view(y, y).widened(units_of(DType::kI32)),
                    DevicePtr<const f16>(flat.ptr), flat_plan.layout, out[0].ptr, out[0].layout());
    }
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& y = output_shapes()[0];
    HostTensor out{y, std::vector<float>(y.elements())};
    const ArgArgs a{max_, last_, v_, {}, {}, {}};
    for (std::uint64_t o = 0; o < v_.outer; ++o) {
      for (std::uint64_t j = 0; j < v_.inner; ++j) {
        Best best;
        for (std::uint64_t r = 0; r < v_.reduced; ++r)
          best.offer(a, in[0].data[(o * v_.reduced + r) * v_.inner + j], r);
        out.data[o * v_.inner + j] = static_cast<float>(best.index);
      }
    }
    return {out};
  }
  OpCost cost() const override { return {input_shapes()[0].elements(), 0}; }
  Tolerance tolerance() const override { return {0.0, 0.0}; }

 private:
  bool max_, last_;
  ArgView v_;
};

template <bool kMax>
std::unique_ptr<BoundOp> bind_arg(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"axis", "keepdims", "select_last_index"});
  const Shape& x = in[0];
  if (x.rank() == 0) reject(name, "needs an input of at least one axis");
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::int64_t axis = int_attr(attrs, "axis", 0, -rank, rank - 1);
  if (axis < 0) axis += rank;
  const auto d = static_cast<std::size_t>(axis);
  if (x[d] > static_cast<std::uint64_t>(INT32_MAX)) {
    reject(name, fmt::format("axis {} of {} is longer than an int32 index reaches", axis, x.str()));
  }
  const bool keepdims = int_attr(attrs, "keepdims", 1, 0, 1) == 1;
  const bool last = int_attr(attrs, "select_last_index", 0, 0, 1) == 1;
  std::vector<std::uint64_t> dims;
  for (std::size_t k = 0; k < x.rank(); ++k) {
    if (k != d) {
      dims.push_back(x[k]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  const ArgView v{x.product(0, d), x[d], x.product(d + 1, x.rank())};
  return std::make_unique<ArgReduceOp>(kMax, last, x, Shape(dims), v);
}

}  // namespace

void add_arg_reduce_kinds(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("arg_max", Arity{1, 1, 1}, bind_arg<true>));
  registry.add(std::make_unique<FunctionKind>("arg_min", Arity{1, 1, 1}, bind_arg<false>));
}

}  // namespace ldmsim::ops
