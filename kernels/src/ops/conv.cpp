// conv: Y = conv(X [N, C, H, W], W [K, C/groups, R, S]) + optional bias [K], ONNX Conv semantics (stride,
// pad [top, left, bottom, right], dilation, groups). Four algorithms are the GEMM of conv_geometry.hpp on the
// tiled matrix multiply engine, batched over (n, group); they differ in where the image matrix's tiles come
// from (conv_tiles.hpp): im2col materialises it in main memory first; direct, implicit and implicit-precomp
// build each tile in ldm from the input. A depthwise conv runs a direct kernel on the vector unit by default
// (depthwise_conv.hpp), with the same bits. Padding classes: X 1-D (tiles read any element range), W as the
// [K, C/groups*R*S] matrix (2-D), bias 1-D, Y as the [N*K, P*Q] matrix of output planes (2-D). An optional
// "activation" (relu or clip, activation.hpp) is applied to each output as it is stored, after an optional
// "residual": a last input of Y's shape added to the output rounded to fp16 (a conv + add the fusion pass folds).
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "conv_tiles.hpp"
#include "depthwise_conv.hpp"
#include "ldmsim/sim/enum_names.hpp"
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

constexpr auto kAlgoNames = enum_names<ConvAlgo>({{ConvAlgo::kIm2col, "im2col"},
                                                  {ConvAlgo::kDirect, "direct"},
                                                  {ConvAlgo::kImplicit, "implicit"},
                                                  {ConvAlgo::kImplicitPrecomp, "implicit-precomp"},
                                                  {ConvAlgo::kDepthwise, "depthwise"}});

/// Throws unless y lies apart from x in device memory: the tile algorithms read x while they write y, so in place
/// they could only give racy results (and their tile memos take x as fixed while the kernel runs). im2col reads
/// all of x in a launch of its own first.
void require_apart(const DeviceTensor& x, const DeviceTensor& y, const std::string& label) {
  const DeviceAddr x0 = x.ptr.addr(), x1 = x0 + x.layout().total * sizeof(f16);
  const DeviceAddr y0 = y.ptr.addr(), y1 = y0 + y.layout().total * sizeof(f16);
  if (x0 < y1 && y0 < x1) {
    throw std::invalid_argument(fmt::format(
        "{}: output {} overlaps input {} in device memory (conv cannot run in place; the im2col algorithm can)", label,
        y.name, x.name));
  }
}

/// A residual input added to the output (a following add folded in by the fusion pass): after (Y = conv + R) or
/// before (Y = R + conv; the two differ only in which NaN a sum of two NaNs keeps).
enum class Residual : std::uint8_t { kNone, kAfter, kBefore };

/// Attribute "residual": absent or false (none), true or "after", "before".
Residual residual_attr(const JsonField& attrs) {
  const auto v = attrs.find("residual");
  if (!v) return Residual::kNone;
  if (v->json().is_boolean()) return v->boolean() ? Residual::kAfter : Residual::kNone;
  const std::string s = v->json().is_string() ? v->string() : "";
  if (s == "after") return Residual::kAfter;
  if (s == "before") return Residual::kBefore;
  v->fail("must be true, false, \"after\" (Y = conv + R) or \"before\" (Y = R + conv)");
}

class ConvOp final : public BoundOp {
 public:
  ConvOp(std::span<const Shape> in, const ConvGeometry& g, ConvAlgo algo, bool algo_given, Residual residual,
         Activation activation)
      : BoundOp({in.begin(), in.end()}, {Shape{g.n, g.k, g.p, g.q}}),
        g_(g),
        algo_(algo),
        algo_given_(algo_given),
        residual_(residual),
        has_bias_(in.size() - (residual == Residual::kNone ? 0 : 1) == 3),
        activation_(activation) {}

  bool folds_activation() const override { return !activation_; }
  bool folds_residual() const override { return residual_ == Residual::kNone && !activation_; }
  SplitGeometry split_geometry() const override {
    SplitGeometry s;
    s.window = true;
    s.kernel = {g_.r, g_.s};
    s.stride = {g_.stride_h, g_.stride_w};
    s.dilation = {g_.dilation_h, g_.dilation_w};
    s.pad_before = {g_.pad_top, g_.pad_left};
    s.pad_after = {g_.pad_bottom, g_.pad_right};
    s.groups = g_.groups;
    s.residual = residual_ != Residual::kNone;
    return s;
  }

  Shape4 view(std::size_t index) const override {
    if (index == 0) return Shape4::view_of(input_shapes()[0]);
    if (index == 1) return Shape4::from_dims({g_.k, g_.depth()});
    if (index == input_shapes().size() || is_residual(index)) return Shape4::from_dims({g_.n * g_.k, g_.pq()});
    return Shape4::from_dims({g_.k});
  }
  InputRole input_role(std::size_t i) const override {
    return i == 0 || is_residual(i) ? InputRole::kData : InputRole::kParameter;
  }
  /// X: every algorithm reads it by its layout's pitches (image rows, tap offsets, depthwise gathers).
  bool reads_any_layout(std::size_t input) const override { return input == 0; }
  PaddingSpec padding(std::size_t index) const override {
    if (index == 1 || index == input_shapes().size() || is_residual(index)) {
      // Y's planes start at even elements, so blocks can split a plane among cores (PaddingSpec::even_rows). The
      // residual is read block by block as Y is written, with its own pitch: its planes need not be even, which
      // spares a re-layout when the next conv reads it as X too (MobileNet-V2: 12 re-layouts instead of 14).
      return PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample, index == input_shapes().size()};
    }
    return PaddingSpec{PaddingClass::kOneD};
  }
  void run(Machine& machine, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    run_with(machine, in, out, label, nullptr);
  }

  /// implicit-precomp with a constant bias and a resident offset table: every core's pack holds the bias and the
  /// table (the same for all: identical packs share one staged copy), one DMA instead of two.
  std::optional<packing::PackPlan> pack_plan(const Arch& arch, std::span<const DeviceTensor> in,
                                             std::span<const DeviceTensor> out,
                                             const std::vector<bool>& constant) const override {
    if (residual_ != Residual::kNone || in.size() != 3 || out.empty() || constant.size() != 3 || !constant[2] ||
        algo_on(arch, operands(in, out)) != ConvAlgo::kImplicitPrecomp)
      return std::nullopt;
    const std::size_t table_bytes = g_.depth() * sizeof(OffsetEntry);
    if (table_bytes > arch.ldm_bytes / 8) return std::nullopt;  // RunTileSource reads it per chunk instead
    packing::PackPlan plan;
    const std::vector<std::int32_t> flat = flat_offsets(in[0].layout());
    auto& halves = plan.derived.emplace_back();  // each int32 as the fp16 bit pairs the device stores
    halves.reserve(2 * flat.size());
    for (const std::int32_t v : flat) {
      const auto bits = static_cast<std::uint32_t>(v);
      halves.push_back(f16::from_bits(static_cast<std::uint16_t>(bits & 0xffffu)));
      halves.push_back(f16::from_bits(static_cast<std::uint16_t>(bits >> 16)));
    }
    const std::vector<packing::PackEntry> entries{{2, 0, static_cast<std::uint32_t>(g_.k), 0},
                                                  {3, 0, static_cast<std::uint32_t>(plan.derived.back().size()), 0}};
    plan.cores.assign(arch.total_cores(), entries);
    return plan;
  }

  void run_packed(Machine& machine, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
                  const std::string& label, const packing::StagedPacks& packs) const override {
    run_with(machine, in, out, label, packs.empty() ? nullptr : &packs);
  }

 private:
  /// The offset table of implicit-precomp: (offset, row, column) per row of the weight matrix.
  std::vector<std::int32_t> flat_offsets(const Layout& xl) const {
    const std::vector<OffsetEntry> table = offset_table(g_, xl);
    std::vector<std::int32_t> flat;
    flat.reserve(3 * table.size());
    for (const OffsetEntry& e : table) {
      flat.push_back(e.offset);
      flat.push_back(e.row);
      flat.push_back(e.column);
    }
    return flat;
  }

  /// Where the GEMM algorithms find their operands: the run's tensors, or (for an estimate) the layouts staging
  /// would give them at addresses that are never read.
  struct Operands {
    DevicePtr<const f16> x, w, bias, residual;
    Layout xl, wl, bias_layout, residual_layout, yl;
    DevicePtr<f16> y;
    bool y_owns_padding = true;  ///< false: Y is a box of a larger buffer (DeviceTensor::owns_padding)
  };

  Operands operands(std::span<const DeviceTensor> in, std::span<const DeviceTensor> out) const {
    Operands o{.x = DevicePtr<const f16>(in[0].ptr),
               .w = DevicePtr<const f16>(in[1].ptr),
               .xl = in[0].layout(),
               .wl = in[1].layout(),
               .yl = out[0].layout(),
               .y = out[0].ptr,
               .y_owns_padding = out[0].owns_padding};
    if (has_bias_) o.bias = DevicePtr<const f16>(in[2].ptr), o.bias_layout = in[2].layout();
    if (residual_ != Residual::kNone)
      o.residual = DevicePtr<const f16>(in.back().ptr), o.residual_layout = in.back().layout();
    return o;
  }

  /// The GEMM of every algorithm but its B operand.
  MatrixMultiply gemm_job(const Operands& o) const {
    MatrixMultiply job{.a = StoredMatrix{o.w, o.wl, g_.kg(), g_.depth(), false},
                       .m = g_.kg(),
                       .n = g_.pq(),
                       .k = g_.depth(),
                       .y = o.y,
                       .yl = o.yl,
                       .y_owns_padding = o.y_owns_padding,
                       .activation = activation_};
    for (std::size_t b = 0; b < g_.n * g_.groups; ++b) {
      job.a_batch.push_back(b % g_.groups);
      job.b_batch.push_back(b);
    }
    if (has_bias_) {
      job.has_row_bias = true;
      job.row_bias = StoredMatrix{o.bias, o.bias_layout, 1, g_.k, false};
    }
    if (residual_ != Residual::kNone) {
      job.has_residual = true;
      job.residual_first = residual_ == Residual::kBefore;
      job.residual = StoredMatrix{o.residual, o.residual_layout, g_.n * g_.k, g_.pq(), false};
    }
    return job;
  }

  /// im2col's image matrix: [N*groups*C/groups*R*S, P*Q] with an even row pitch.
  Layout image_matrix_layout() const {
    const std::size_t pitch = tiling::ceil_even(g_.pq()), rows = g_.n * g_.groups * g_.depth();
    Layout cl = Layout::natural(Shape4::from_dims({rows, g_.pq()}));
    cl.chw_pitch = pitch;
    cl.total = rows * pitch;
    return cl;
  }

 public:
  std::optional<double> kernel_estimate(const Arch& arch, KernelEstimates& memo) const override {
    if (algo_ == ConvAlgo::kDepthwise) return std::nullopt;
    const auto layout = [&](std::size_t i) { return choose_plan(view(i), padding(i), StagingPolicy::kMethod).layout; };
    // Addresses a transaction apart from nothing: the search prices reads by their offsets within transactions.
    const auto at = [](std::size_t i) { return DeviceAddr{(i + 1) << 30}; };
    const std::size_t y = input_shapes().size();
    Operands o{.x = DevicePtr<const f16>(at(0)),
               .w = DevicePtr<const f16>(at(1)),
               .xl = layout(0),
               .wl = layout(1),
               .yl = layout(y),
               .y = DevicePtr<f16>(at(y))};
    if (has_bias_) o.bias = DevicePtr<const f16>(at(2)), o.bias_layout = layout(2);
    if (residual_ != Residual::kNone) {
      o.residual = DevicePtr<const f16>(at(y - 1)), o.residual_layout = layout(y - 1);
    }
    MatrixMultiply job = gemm_job(o);
    switch (algo_on(arch, o)) {
      case ConvAlgo::kIm2col:
        job.b = StoredMatrix{DevicePtr<const f16>(at(y + 1)), image_matrix_layout(), g_.depth(), g_.pq(), false};
        return estimated_matrix_multiply(memo, arch, job);
      case ConvAlgo::kDirect: {
        const WindowTileSource source(g_, o.x, o.xl);
        job.b_source = &source;
        return estimated_matrix_multiply(memo, arch, job);
      }
      case ConvAlgo::kImplicit:
      case ConvAlgo::kImplicitPrecomp: {
        const DevicePtr<const std::int32_t> table(algo_ == ConvAlgo::kImplicitPrecomp ? at(y + 1) : DeviceAddr{0});
        const RunTileSource source(g_, o.x, o.xl, table, arch.ldm_bytes);
        job.b_source = &source;
        return estimated_matrix_multiply(memo, arch, job);
      }
      case ConvAlgo::kDepthwise:
        break;
    }
    return std::nullopt;
  }

 private:
  void run_with(Machine& machine, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
                const std::string& label, const packing::StagedPacks* packs) const {
    const Operands o = operands(in, out);
    MatrixMultiply job = gemm_job(o);
    const DevicePtr<const f16> x = o.x;
    const Layout& xl = o.xl;
    const ConvAlgo algo = algo_on(machine.arch(), o);
    switch (algo) {
      case ConvAlgo::kDepthwise: {
        require_apart(in[0], out[0], label);
        const DepthwiseConv dw{.g = g_,
                               .x = o.x,
                               .w = o.w,
                               .bias = o.bias,
                               .residual = o.residual,
                               .xl = o.xl,
                               .wl = o.wl,
                               .bias_layout = o.bias_layout,
                               .residual_layout = o.residual_layout,
                               .yl = o.yl,
                               .y = o.y,
                               .has_bias = has_bias_,
                               .has_residual = residual_ != Residual::kNone,
                               .residual_first = residual_ == Residual::kBefore,
                               .activation = activation_};
        run_depthwise_conv(machine, dw, label);
        record(algo, 0, 0, nullptr);
        return;
      }
      case ConvAlgo::kIm2col: {
        const std::size_t pitch = tiling::ceil_even(g_.pq()), rows = g_.n * g_.groups * g_.depth();
        DeviceScratch scratch(machine);
        const DevicePtr<f16> col = scratch.alloc<f16>(checked_mul(rows, pitch, "conv: im2col matrix"),
                                                      AllocOptions{.name = label + ":im2col"});
        std::atomic<std::uint64_t> address_ops{0};
        launch_all(machine, label + ":im2col", im2col_kernel, Im2colArgs{g_, x, xl, col, pitch, &address_ops});
        job.b = StoredMatrix{DevicePtr<const f16>(col), image_matrix_layout(), g_.depth(), g_.pq(), false};
        record(algo, rows * pitch * sizeof(f16), address_ops.load(), run_matrix_multiply(machine, label, job));
        return;
      }
      case ConvAlgo::kDirect: {
        require_apart(in[0], out[0], label);
        const WindowTileSource source(g_, x, xl);
        job.b_source = &source;
        const nlohmann::json blocking = run_matrix_multiply(machine, label, job);
        record(algo, 0, source.address_ops(), blocking);
        return;
      }
      case ConvAlgo::kImplicit:
      case ConvAlgo::kImplicitPrecomp: {
        require_apart(in[0], out[0], label);
        DevicePtr<std::int32_t> table;
        DeviceScratch scratch(machine);
        if (algo == ConvAlgo::kImplicitPrecomp) {  // the convolution preprocessor, once per layer
          const std::vector<std::int32_t> flat = flat_offsets(xl);
          table = scratch.alloc<std::int32_t>(flat.size(), AllocOptions{.name = label + ":offsets"});
          machine.upload(table, flat);
        }
        const RunTileSource source(g_, x, xl, DevicePtr<const std::int32_t>(table), machine.arch().ldm_bytes);
        job.b_source = &source;
        if (packs != nullptr && algo == ConvAlgo::kImplicitPrecomp && job.has_row_bias &&
            source.resident_elements() > 0) {
          job.packs = packs;
          job.pack_bias_input = 2;
          job.pack_resident_input = 3;
        }
        const nlohmann::json blocking = run_matrix_multiply(machine, label, job);
        record(algo, algo == ConvAlgo::kImplicitPrecomp ? g_.depth() * sizeof(OffsetEntry) : 0, source.address_ops(),
               blocking);
        return;
      }
    }
  }

 public:
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    HostTensor y{output_shapes()[0], std::vector<float>(g_.n * g_.k * g_.pq())};
    const auto& x = in[0].data;
    const auto& w = in[1].data;
    for (std::size_t n = 0; n < g_.n; ++n) {
      for (std::size_t k = 0; k < g_.k; ++k) {
        const std::size_t group = k / g_.kg();
        for (std::size_t p = 0; p < g_.p; ++p) {
          for (std::size_t q = 0; q < g_.q; ++q) {
            double sum = has_bias_ ? in[2].data[k] : 0.0;
            for (std::size_t c = 0; c < g_.cg(); ++c) {
              for (std::size_t r = 0; r < g_.r; ++r) {
                const auto h = static_cast<std::int64_t>(p * g_.stride_h + r * g_.dilation_h) -
                               static_cast<std::int64_t>(g_.pad_top);
                if (h < 0 || h >= static_cast<std::int64_t>(g_.h)) continue;
                for (std::size_t s = 0; s < g_.s; ++s) {
                  const auto col = static_cast<std::int64_t>(q * g_.stride_w + s * g_.dilation_w) -
                                   static_cast<std::int64_t>(g_.pad_left);
                  if (col < 0 || col >= static_cast<std::int64_t>(g_.w)) continue;
                  const std::size_t xi =
                      ((n * g_.c + group * g_.cg() + c) * g_.h + static_cast<std::size_t>(h)) * g_.w +
                      static_cast<std::size_t>(col);
                  sum += static_cast<double>(x[xi]) * w[((k * g_.cg() + c) * g_.r + r) * g_.s + s];
                }
              }
            }
            const std::size_t yi = ((n * g_.k + k) * g_.p + p) * g_.q + q;
            if (residual_ != Residual::kNone) sum += in.back().data[yi];
            y.data[yi] = static_cast<float>(activation_.reference(sum));
          }
        }
      }
    }
    return {y};
  }
  OpCost cost() const override {
    const std::uint64_t residual = residual_ == Residual::kNone ? 0 : 1;
    return {(2 * g_.depth() + residual + activation_.ops()) * g_.n * g_.k * g_.pq(), 0};
  }
  Tolerance tolerance() const override { return {2e-3, 1.0 / 512}; }
  nlohmann::json run_metrics() const override { return metrics_; }

 private:
  /// What the last run measured beside the machine's statistics.
  void record(ConvAlgo algo, std::uint64_t extra_main_memory_bytes, std::uint64_t address_ops,
              const nlohmann::json& blocking) const {
    const double outputs = static_cast<double>(g_.n * g_.k * g_.pq());
    metrics_ = {{"algo", std::string(to_string(algo))},
                {"extra_main_memory_bytes", extra_main_memory_bytes},
                {"address_ops", address_ops},
                {"address_ops_per_output", static_cast<double>(address_ops) / outputs},
                {"blocking", blocking}};
    if (activation_) metrics_["activation"] = activation_.to_json();
    if (residual_ != Residual::kNone) metrics_["residual"] = residual_ == Residual::kBefore ? "before" : "after";
  }

  mutable nlohmann::json metrics_;
  bool is_residual(std::size_t index) const {
    return residual_ != Residual::kNone && index + 1 == input_shapes().size();
  }

  /// The algorithm that runs on `arch`: the one bound, unless it was the default and no blocking of its image tiles
  /// fits the local store (rows too wide to read whole: a long 1-D signal, a very wide image); then direct, whose
  /// windows are as wide as a tile's outputs within one output row, else im2col, which builds its image matrix in
  /// segments of the free ldm.
  ConvAlgo algo_on(const Arch& arch, const Operands& o) const {
    if (algo_given_ || algo_ != ConvAlgo::kImplicitPrecomp) return algo_;
    MatrixMultiply job = gemm_job(o);
    const RunTileSource precomp(g_, o.x, o.xl, DevicePtr<const std::int32_t>(DeviceAddr{1} << 30), arch.ldm_bytes);
    job.b_source = &precomp;
    if (matrix_multiply_fits(arch, job)) return algo_;
    const WindowTileSource windows(g_, o.x, o.xl);
    job.b_source = &windows;
    if (matrix_multiply_fits(arch, job)) return ConvAlgo::kDirect;
    job.b_source = nullptr;
    job.b = StoredMatrix{DevicePtr<const f16>(DeviceAddr{1} << 30), image_matrix_layout(), g_.depth(), g_.pq(), false};
    return matrix_multiply_fits(arch, job) ? ConvAlgo::kIm2col : algo_;
  }

  ConvGeometry g_;
  ConvAlgo algo_;
  bool algo_given_;  ///< the workload or --conv-algo named it: it runs even where it does not fit (and traps)
  Residual residual_;
  bool has_bias_;
  Activation activation_;
};

/// pad: one integer, [h, w], or [top, left, bottom, right] (ONNX order).
std::array<std::size_t, 4> pads_attr(const JsonField& attrs) {
  const auto v = attrs.find("pad");
  if (!v) return {0, 0, 0, 0};
  constexpr std::uint64_t kMax = std::uint64_t{1} << 24;
  if (!v->json().is_array()) {
    const std::size_t one = v->unsigned_integer(0, kMax);
    return {one, one, one, one};
  }
  const auto items = v->elements();
  if (items.size() == 2) {
    const std::size_t h = items[0].unsigned_integer(0, kMax), w = items[1].unsigned_integer(0, kMax);
    return {h, w, h, w};
  }
  if (items.size() != 4) v->fail("must be an integer, [h, w] or [top, left, bottom, right]");
  return {items[0].unsigned_integer(0, kMax), items[1].unsigned_integer(0, kMax), items[2].unsigned_integer(0, kMax),
          items[3].unsigned_integer(0, kMax)};
}

/// Output size along one axis, or a rejection when the dilated kernel exceeds the padded input.
std::size_t output_size(std::string_view name, std::string_view axis, std::size_t input, std::size_t pad_before,
                        std::size_t pad_after, std::size_t kernel, std::size_t dilation, std::size_t stride) {
  const std::uint64_t padded = checked_add(checked_add(input, pad_before, name), pad_after, name);
  const std::uint64_t span = checked_add(checked_mul(kernel - 1, dilation, name), 1, name);
  if (span > padded) {
    reject(name,
           fmt::format("the dilated kernel's {} ({}) is larger than the padded input's ({})", axis, span, padded));
  }
  return (padded - span) / stride + 1;
}

std::unique_ptr<BoundOp> bind_conv(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"stride", "pad", "dilation", "groups", "algo", "residual", "activation"});
  const Residual residual = residual_attr(attrs);
  if (residual == Residual::kNone && in.size() == 4) {
    reject(name, "4 inputs are X, W, bias and a residual: set attribute \"residual\"");
  }
  if (residual != Residual::kNone && in.size() < 3) reject(name, "\"residual\" needs the residual as the last input");
  const bool has_bias = in.size() - (residual == Residual::kNone ? 0 : 1) == 3;
  const Shape& x = in[0];
  const Shape& w = in[1];
  if (x.rank() != 4) reject(name, fmt::format("X {} must be 4-D (NCHW)", x.str()));
  if (w.rank() != 4) reject(name, fmt::format("W {} must be 4-D [K, C/groups, R, S]", w.str()));
  ConvGeometry g;
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.k = w[0], g.r = w[2], g.s = w[3];
  g.groups = static_cast<std::size_t>(int_attr(attrs, "groups", 1, 1, std::int64_t{1} << 24));
  std::tie(g.stride_h, g.stride_w) = pair_attr(attrs, "stride", 1, 1);
  std::tie(g.dilation_h, g.dilation_w) = pair_attr(attrs, "dilation", 1, 1);
  const auto pads = pads_attr(attrs);
  g.pad_top = pads[0], g.pad_left = pads[1], g.pad_bottom = pads[2], g.pad_right = pads[3];
  if (g.c % g.groups != 0 || g.k % g.groups != 0) {
    reject(name, fmt::format("groups {} must divide the input channels ({}) and the output channels ({})", g.groups,
                             g.c, g.k));
  }
  if (w[1] != g.cg()) {
    reject(name,
           fmt::format("W {} must have C/groups = {} channels (X {}, groups {})", w.str(), g.cg(), x.str(), g.groups));
  }
  if (has_bias && !(in[2] == Shape{g.k})) reject(name, fmt::format("bias {} must be [{}]", in[2].str(), g.k));
  g.p = output_size(name, "height", g.h, g.pad_top, g.pad_bottom, g.r, g.dilation_h, g.stride_h);
  g.q = output_size(name, "width", g.w, g.pad_left, g.pad_right, g.s, g.dilation_w, g.stride_w);
  checked_mul(checked_mul(g.n, g.k, name), checked_mul(g.p, g.q, name), name);
  // A depthwise conv runs its own kernel unless told otherwise (the same bits as the GEMM algorithms, fewer cycles).
  ConvAlgo algo = is_depthwise(g) ? ConvAlgo::kDepthwise : ConvAlgo::kImplicitPrecomp;
  bool algo_given = false;
  if (const auto a = attrs.find("algo")) {
    const auto parsed = kAlgoNames.parse(a->string());
    if (!parsed) a->fail(fmt::format("must be one of {}", kAlgoNames.list(", ", " or ")));
    algo = *parsed;
    algo_given = true;
  }
  // "depthwise" names the kernel for convs whose output channels each read one input channel; the rest of a network
  // given it (--conv-algo depthwise) runs the default.
  if (algo == ConvAlgo::kDepthwise && !is_depthwise(g)) algo = ConvAlgo::kImplicitPrecomp, algo_given = false;
  // The preprocessor's table holds 32-bit offsets within a group's channels (padded pitches at most +1 each).
  const std::uint64_t span =
      checked_add(checked_mul(g.cg(), checked_mul(g.h + 1, g.w + 1, name), name),
                  checked_add(checked_mul(g.r * g.dilation_h, g.w + 1, name), g.s * g.dilation_w, name), name);
  if (algo == ConvAlgo::kImplicitPrecomp && span > static_cast<std::uint64_t>(INT32_MAX)) {
    reject(name, fmt::format("implicit-precomp's offset table holds 32-bit offsets, but a group's {} channels of {}x{} "
                             "span {} elements; use \"algo\": \"direct\" (or --conv-algo direct)",
                             g.cg(), g.h, g.w, span));
  }
  if (residual != Residual::kNone && !(in.back() == Shape{g.n, g.k, g.p, g.q})) {
    reject(name, fmt::format("the residual {} must have the output's shape [{}, {}, {}, {}]", in.back().str(), g.n, g.k,
                             g.p, g.q));
  }
  return std::make_unique<ConvOp>(in, g, algo, algo_given, residual, Activation::parse(name, attrs));
}

}  // namespace

std::string_view to_string(ConvAlgo algo) noexcept {
  return kAlgoNames.name(algo);
}

ConvAlgo parse_conv_algo(std::string_view name) {
  const auto parsed = kAlgoNames.parse(name);
  if (!parsed) throw ConfigError(fmt::format("unknown conv algorithm '{}' (one of {})", name, kAlgoNames.list()));
  return *parsed;
}

void add_conv_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("conv", Arity{2, 4, 1}, bind_conv, OperatorTraits{SplitRule::kConv}));
}

}  // namespace ldmsim::ops
