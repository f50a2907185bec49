// global_avg_pool: the mean of each channel plane (ONNX GlobalAveragePool: every dim after the second becomes 1).
// Each core owns an even-bounded range of output elements (planes); a plane is gathered in chunks of the free
// ldm, so a plane of any size works, and summed in fp32.
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

struct GlobalPoolArgs {
  DevicePtr<const f16> x;
  Layout xl;
  std::uint64_t plane = 0;  ///< input elements per output element
  DevicePtr<f16> y;
  Layout yl;
};

void global_pool_kernel(Core& core, const GlobalPoolArgs& a) {
  const tiling::Range share = tiling::my_share(core, a.yl.total);
  if (share.empty()) return;
  const std::size_t chunk = std::min<std::size_t>(tiling::fit_elements(core, 3), tiling::ceil_even(a.plane) + 2);
  auto staging = core.ldm().alloc<f16>(chunk + 2);
  // The chunk in ldm as the core computes on it; the host converts it from where the reads put it.
  [[maybe_unused]] const auto values = core.ldm().alloc<f16>(chunk);
  const std::size_t out_tile = std::min(tiling::fit_elements(core, 1, 4096, (2 * chunk + 4) * 2), share.size());
  auto yb = core.ldm().alloc<f16>(tiling::ceil_even(out_tile));
  std::vector<float> xs(chunk), ys(out_tile);
  const std::size_t planes = a.yl.shape.elements();
  tiling::for_each_tile(share, out_tile, [&](tiling::Range t) {
    std::fill(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(t.size()), 0.0f);
    const std::size_t first = a.yl.logical_at_or_after(t.begin), last = a.yl.logical_at_or_after(t.end);
    for_each_run(a.yl, first, std::min(last, planes), [&](std::size_t p0, std::size_t offset, std::size_t n) {
      for (std::size_t p = p0; p < p0 + n; ++p) {
        float sum = 0.0f;
        for (std::uint64_t done = 0; done < a.plane; done += chunk) {
          const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, a.plane - done));
          gather_floats(core, staging, a.x, a.xl, p * a.plane + done, len, xs.data());
          for (std::size_t i = 0; i < len; ++i) sum += xs[i];
          core.compute({.flops = len});
        }
        ys[offset - t.begin + (p - p0)] = sum / static_cast<float>(a.plane);
      }
    });
    to_halves(ys.data(), t.size(), yb);
    tiling::put_range(core, a.y, yb, t).wait();
  });
}

class GlobalAvgPoolOp final : public BoundOp {
 public:
  GlobalAvgPoolOp(Shape x, Shape y) : BoundOp({x}, {y}) {}
  PaddingSpec padding(std::size_t) const override { return PaddingSpec{PaddingClass::kOneD}; }
  bool reads_any_layout(std::size_t) const override { return true; }  // X is gathered by logical index
  void run(Machine& m, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    launch_all(m, label, global_pool_kernel,
               GlobalPoolArgs{DevicePtr<const f16>(in[0].ptr), in[0].layout(), plane(), out[0].ptr, out[0].layout()});
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    const Shape& y = output_shapes()[0];
    HostTensor out{y, std::vector<float>(y.elements())};
    const std::uint64_t n = plane();
    for (std::uint64_t p = 0; p < y.elements(); ++p) {
      double sum = 0.0;
      for (std::uint64_t i = 0; i < n; ++i) sum += in[0].data[p * n + i];
      out.data[p] = static_cast<float>(sum / static_cast<double>(n));
    }
    return {out};
  }
  OpCost cost() const override { return {input_shapes()[0].elements(), 0}; }
  Tolerance tolerance() const override { return {2e-3, 1.0 / 512}; }

 private:
  std::uint64_t plane() const { return input_shapes()[0].product(2, input_shapes()[0].rank()); }
};

std::unique_ptr<BoundOp> bind_global_avg_pool(std::string_view name, const JsonField& attrs,
                                              std::span<const Shape> in) {
  check_attrs(attrs, {});
  if (in[0].rank() < 3)
    reject(name, fmt::format("needs an input of rank >= 3 (N, C, spatial...), got {}", in[0].str()));
  std::vector<std::uint64_t> dims(in[0].rank(), 1);
  dims[0] = in[0][0];
  dims[1] = in[0][1];
  return std::make_unique<GlobalAvgPoolOp>(in[0], Shape(dims));
}

}  // namespace

void add_global_pool_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("global_avg_pool", Arity{1, 1, 1}, bind_global_avg_pool,
                                              OperatorTraits{SplitRule::kPool}));
}

}  // namespace ldmsim::ops
