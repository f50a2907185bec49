// layer_norm (ONNX LayerNormalization, Y only): each row of the trailing dims from `axis` normalised to zero mean
// and unit variance, then scaled and shifted per column: y = (x - mean) / sqrt(var + epsilon) * scale + bias.
// Each core writes its share of the output in destination tiles (write_gathered_tiles). When a row fits well in
// ldm it is read once (statistics and outputs from the resident copy) and the scale and bias once per core;
// otherwise the row is gathered in chunks per pass (the mean, the squared deviations, the output). Statistics:
// fp32 sums per chunk combined in double, kept while the tile's next segment is in the same row.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

struct LayerNormArgs {
  DevicePtr<const f16> x;
  Layout xl;
  DevicePtr<const f16> scale;
  Layout sl;
  DevicePtr<const f16> bias;  // null: no bias
  Layout bl;
  std::uint64_t cols = 1;
  float epsilon = 1e-5f;
  DevicePtr<f16> y;
  Layout yl;
};

void layer_norm_kernel(Core& core, const LayerNormArgs& a) {
  const std::uint64_t cols = a.cols;
  // A row, the scale and the bias resident in ldm when three rows fit in under a third of the free ldm: then X
  // is read once and the parameters once per core. Otherwise everything is gathered in chunks per use.
  const bool resident = tiling::fit_elements(core, 9, std::size_t{1} << 40) >= cols + 2;
  std::vector<float> row_f, scale_f, bias_f;
  LdmSpan<f16> row_buf;
  if (resident) {
    row_buf = core.ldm().alloc<f16>(cols);
    row_f.resize(cols);
  }
  auto scale_buf = resident ? core.ldm().alloc<f16>(cols) : LdmSpan<f16>();
  auto bias_buf = resident && a.bias ? core.ldm().alloc<f16>(cols) : LdmSpan<f16>();
  const std::size_t chunk = tiling::fit_elements(core, 7);
  auto staging = core.ldm().alloc<f16>(chunk + 2);
  // The chunk in ldm as the core computes on it; the host converts it from where the reads put it.
  [[maybe_unused]] const auto values = core.ldm().alloc<f16>(chunk);
  // Host scratch for a chunk, not zero-filled: most rows touch a few hundred of its elements, and zeroing all of
  // it on every core cost a page fault per 4 KiB at every launch (ConvNeXt's LayerNorms: 0.3 s each).
  const auto xs = std::make_unique_for_overwrite<float[]>(chunk);
  const auto params = std::make_unique_for_overwrite<float[]>(chunk);
  if (resident) {
    const auto load = [&](DevicePtr<const f16> from, const Layout& layout, LdmSpan<f16> into, std::vector<float>& f) {
      tiling::gather(core, staging, from, layout, 0, cols, into.data());
      f.resize(cols);
      to_floats(into, 0, cols, f.data());
    };
    load(a.scale, a.sl, scale_buf, scale_f);
    if (a.bias) load(a.bias, a.bl, bias_buf, bias_f);
  }
  // Statistics of one row, cached: consecutive segments of a tile usually share it.
  std::uint64_t cached_row = ~std::uint64_t{0};
  float mean = 0.0f, inv_std = 1.0f;
  const auto row_stats = [&](std::uint64_t row) {
    if (row == cached_row) return;
    double sum = 0.0, squares = 0.0;
    if (resident) tiling::gather(core, staging, a.x, a.xl, row * cols, cols, row_buf.data());
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint64_t done = 0; done < cols; done += chunk) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, cols - done));
        float* v = xs.get();
        if (resident) {
          if (pass == 0) to_floats(row_buf, done, n, row_f.data() + done);
          v = row_f.data() + done;
        } else {
          gather_floats(core, staging, a.x, a.xl, row * cols + done, n, xs.get());
        }
        float partial = 0.0f;
        for (std::size_t i = 0; i < n; ++i) {
          const float d = pass == 0 ? v[i] : v[i] - mean;
          partial += pass == 0 ? d : d * d;
        }
        (pass == 0 ? sum : squares) += partial;
        core.compute({.flops = 2 * n});
      }
      if (pass == 0) mean = static_cast<float>(sum / static_cast<double>(cols));
    }
    inv_std = 1.0f / std::sqrt(static_cast<float>(squares / static_cast<double>(cols)) + a.epsilon);
    cached_row = row;
  };
  tiling::write_gathered_tiles(
      core, a.y, a.yl,
      [&](std::size_t first, std::size_t last, LdmSpan<f16>, LdmSpan<f16> logical) {
        for (std::size_t at = first; at < last;) {
          const std::uint64_t row = at / cols, col = at % cols;
          const std::size_t segment = static_cast<std::size_t>(std::min<std::uint64_t>(cols - col, last - at));
          row_stats(row);
          std::vector<float> ys(segment);
          if (resident) {
            for (std::size_t i = 0; i < segment; ++i) {
              const std::size_t c = col + i;
              ys[i] = (row_f[c] - mean) * inv_std * scale_f[c] + (a.bias ? bias_f[c] : 0.0f);
            }
            core.compute({.flops = 4 * segment});
          } else {
            for (std::size_t done = 0; done < segment; done += chunk) {
              const std::size_t n = std::min(chunk, segment - done);
              gather_floats(core, staging, a.x, a.xl, at + done, n, xs.get());
              for (std::size_t i = 0; i < n; ++i) ys[done + i] = (xs[i] - mean) * inv_std;
              gather_floats(core, staging, a.scale, a.sl, col + done, n, params.get());
              for (std::size_t i = 0; i < n; ++i) ys[done + i] *= params[i];
              if (a.bias) {
                gather_floats(core, staging, a.bias, a.bl, col + done, n, params.get());
                for (std::size_t i = 0; i < n; ++i) ys[done + i] += params[i];
              }
              core.compute({.flops = 4 * n});
            }
          }
          to_halves(ys.data(), segment, logical.subspan(at - first, segment));
          at += segment;
        }
      },
      std::max<std::size_t>(tiling::kStreamingShare, tiling::ceil_even(cols)));
}

class LayerNormOp final : public BoundOp {
 public:
  LayerNormOp(std::vector<Shape> in, std::size_t axis, float epsilon)
      : BoundOp(in, {in[0]}), axis_(axis), epsilon_(epsilon) {}

  InputRole input_role(std::size_t i) const override { return i == 0 ? InputRole::kData : InputRole::kParameter; }
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    const bool bias = in.size() == 3;
    launch_all(m, label, layer_norm_kernel,
               LayerNormArgs{DevicePtr<const f16>(in[0].ptr), in[0].layout(), DevicePtr<const f16>(in[1].ptr),
                             in[1].layout(), bias ? DevicePtr<const f16>(in[2].ptr) : DevicePtr<const f16>(),
                             bias ? in[2].layout() : Layout{}, cols(), epsilon_, out[0].ptr, out[0].layout()});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    HostTensor y = in[0];
    const std::uint64_t n = cols();
    for (std::uint64_t r = 0; r < y.data.size() / n; ++r) {
      const float* x = in[0].data.data() + r * n;
      double mean = 0.0, var = 0.0;
      for (std::uint64_t i = 0; i < n; ++i) mean += x[i];
      mean /= static_cast<double>(n);
      for (std::uint64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
      var /= static_cast<double>(n);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double v = (x[i] - mean) / std::sqrt(var + static_cast<double>(epsilon_)) * in[1].data[i];
        y.data[r * n + i] = static_cast<float>(in.size() == 3 ? v + in[2].data[i] : v);
      }
    }
    return {y};
  }
  OpCost cost() const override { return {8 * input_shapes()[0].elements(), 0}; }
  Tolerance tolerance() const override { return {4e-3, 1.0 / 256}; }

  FusionForm fusion_form() const override {
    return {.kind = FusionForm::Kind::kLayerNorm, .axis_begin = axis_, .epsilon = epsilon_};
  }

 private:
  std::uint64_t cols() const { return input_shapes()[0].product(axis_, input_shapes()[0].rank()); }
  std::size_t axis_;
  float epsilon_;
};

std::unique_ptr<BoundOp> bind_layer_norm(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"axis", "epsilon"});
  const auto rank = static_cast<std::int64_t>(in[0].rank());
  if (rank == 0) reject(name, "the input must have rank >= 1");
  std::int64_t axis = int_attr(attrs, "axis", -1, -rank, rank - 1);
  if (axis < 0) axis += rank;
  const double epsilon = num_attr(attrs, "epsilon", 1e-5);
  if (!(epsilon > 0.0) || epsilon > 1.0) reject(name, fmt::format("epsilon must be in (0, 1], got {}", epsilon));
  const std::vector<std::uint64_t> trailing(in[0].dims().begin() + axis, in[0].dims().end());
  const Shape normalized(trailing);
  for (std::size_t k = 1; k < in.size(); ++k) {
    if (in[k].elements() != normalized.elements() || (in[k].rank() != 1 && !(in[k] == normalized))) {
      reject(name, fmt::format("{} must have the normalized shape {} (or be 1-D of {} elements), got {}",
                               k == 1 ? "scale" : "bias", normalized.str(), normalized.elements(), in[k].str()));
    }
  }
  return std::make_unique<LayerNormOp>(std::vector<Shape>(in.begin(), in.end()), static_cast<std::size_t>(axis),
                                       static_cast<float>(epsilon));
}

}  // namespace

void add_layer_norm_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("layer_norm", Arity{2, 3, 1}, bind_layer_norm));
}

}  // namespace ldmsim::ops
