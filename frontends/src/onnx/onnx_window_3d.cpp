// 3-D Conv, MaxPool and AveragePool (video and volumetric nets) through the 2-D engine, exactly: the depth window
// is unrolled into channels. For output depth d the 3-D window reads input depths d * sd + k * dd (k < kd), so the
// input, padded in depth, is cut into kd strided depth slices of D_out planes each, stacked next to the channels
// and folded to [N * D_out, C * kd, H, W]; a 2-D conv of the weights [M, C / g * kd, kH, kW] (the 3-D weights'
// own order: kd varies fastest after the channel) then sums exactly the 3-D window's products, and reshapes and a
// transpose bring [N * D_out, M, H', W'] back to [N, M, D_out, H', W']. A pool pools each of the kd slices in 2-D
// and takes their max or mean (a reduce over the kd axis). The unrolled input is kd times the input's size.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {
namespace {

/// The 3-D window attributes: kernel_shape, strides and dilations [d, h, w], pads [d0, h0, w0, d1, h1, w1].
struct Window3d {
  std::vector<std::int64_t> kernel, strides, dilations, pads;
};

std::optional<Window3d> read_window_3d(const Attributes& a, NodeTranslator& t) {
  Window3d w;
  const std::string auto_pad = a.text("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    t.problem(fmt::format("auto_pad {} is not supported (NOTSET or VALID; export with explicit pads)", auto_pad));
  }
  w.kernel = a.integers("kernel_shape", {});
  w.strides = a.integers("strides", {1, 1, 1});
  w.dilations = a.integers("dilations", {1, 1, 1});
  w.pads = a.integers("pads", {0, 0, 0, 0, 0, 0});
  if (auto_pad == "VALID") w.pads = {0, 0, 0, 0, 0, 0};
  if ((!w.kernel.empty() && w.kernel.size() != 3) || w.strides.size() != 3 || w.dilations.size() != 3 ||
      w.pads.size() != 6) {
    t.problem("a 3-D window needs kernel_shape, strides and dilations of 3 entries and pads of 6");
    return std::nullopt;
  }
  for (std::size_t d = 0; d < 3; ++d) {
    if (w.strides[d] < 1 || w.dilations[d] < 1 || w.pads[d] < 0 || w.pads[d + 3] < 0 ||
        (!w.kernel.empty() && w.kernel[d] < 1)) {
      t.problem("kernel_shape, strides and dilations must be positive, pads non-negative");
      return std::nullopt;
    }
  }
  if (!t.problems().empty()) return std::nullopt;
  return w;
}

/// The node's input 0 [N, C, D, H, W], padded in depth by `pads` (value `fill`), as kd depth slices stacked next
/// to the channels: [N * D_out, C * kd, H, W]. Returns its name, or empty with a problem.
std::string unroll_depth(NodeTranslator& t, const std::vector<std::uint64_t>& x, std::int64_t kd, std::int64_t sd,
                         std::int64_t dd, std::int64_t pad_begin, std::int64_t pad_end, double fill,
                         std::int64_t& d_out) {
  const std::string& y = t.node().output(0);
  const auto n = static_cast<std::int64_t>(x[0]), c = static_cast<std::int64_t>(x[1]),
             depth = static_cast<std::int64_t>(x[2]), h = static_cast<std::int64_t>(x[3]),
             w = static_cast<std::int64_t>(x[4]);
  const std::int64_t padded_depth = depth + pad_begin + pad_end, reach = dd * (kd - 1) + 1;
  if (padded_depth < reach) {
    t.problem(
        fmt::format("the depth window ({} with dilation {}) is larger than the padded depth {}", kd, dd, padded_depth));
    return {};
  }
  d_out = (padded_depth - reach) / sd + 1;
  std::string source = t.input(0);
  if (pad_begin > 0 || pad_end > 0) {
    const std::string padded = t.fresh_name(y + "/depth_padded");
    t.add_op("pad", {source}, {padded},
             {{"pads", {0, 0, pad_begin, 0, 0, 0, 0, pad_end, 0, 0}}, {"mode", "constant"}, {"value", fill}});
    source = padded;
  }
  // Slice k: depths k * dd, k * dd + sd, ... (D_out of them), as [N, C, 1, D_out, H, W].
  std::vector<std::string> slices;
  for (std::int64_t k = 0; k < kd; ++k) {
    const std::string slice = t.fresh_name(fmt::format("{}/depth{}", y, k));
    const std::string stacked = t.fresh_name(fmt::format("{}/depth{}_6d", y, k));
    t.add_op("slice", {source}, {slice},
             {{"starts", {k * dd}}, {"ends", {k * dd + (d_out - 1) * sd + 1}}, {"axes", {2}}, {"steps", {sd}}});
    t.add_op("reshape", {slice}, {stacked}, {{"shape", {n, c, 1, d_out, h, w}}});
    slices.push_back(stacked);
  }
  std::string all = slices.front();
  if (kd > 1) {
    all = t.fresh_name(y + "/depth_windows");
    t.add_op("concat", slices, {all}, {{"axis", 2}});
  }
  const std::string moved = t.fresh_name(y + "/depth_major"), unrolled = t.fresh_name(y + "/unrolled");
  t.add_op("transpose", {all}, {moved}, {{"perm", {0, 3, 1, 2, 4, 5}}});  // [N, D_out, C, kd, H, W]
  t.add_op("reshape", {moved}, {unrolled}, {{"shape", {n * d_out, c * kd, h, w}}});
  return unrolled;
}

/// Windows along one axis of `extent` with pads p0 and p1, as the 2-D conv (floor) and pool (ceil_mode: a last
/// window that starts inside the input or its leading pad) count them; 1 when none fits (the op then refuses).
std::int64_t window_count(std::int64_t extent, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                          std::int64_t p0, std::int64_t p1, bool ceil) {
  const std::int64_t padded = extent + p0 + p1, reach = dilation * (kernel - 1) + 1;
  if (padded < reach) return 1;
  std::int64_t n = (padded - reach) / stride + 1;
  if (ceil && (padded - reach) % stride != 0 && n * stride < extent + p0) ++n;
  return n;
}

/// [N * D_out, M, H', W'] (`flat`) back to the node's [N, M, D_out, H', W'].
void fold_depth_back(NodeTranslator& t, const std::string& flat, std::int64_t n, std::int64_t d_out, std::int64_t m,
                     std::int64_t h_out, std::int64_t w_out) {
  const std::string& y = t.node().output(0);
  const std::string split = t.fresh_name(y + "/depth_split");
  t.add_op("reshape", {flat}, {split}, {{"shape", {n, d_out, m, h_out, w_out}}});
  t.add_op("transpose", {split}, {y}, {{"perm", {0, 2, 1, 3, 4}}});
}

}  // namespace

void translate_conv_3d(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  if (!t.arity(2, 3, 1)) return;
  const auto win = read_window_3d(a, t);
  const auto* x = t.input_shape(0);
  const auto* w = t.input_shape(1);
  if (!win || x == nullptr || w == nullptr) return;
  if (x->size() != 5 || w->size() != 5) {
    t.problem(
        fmt::format("a 3-D Conv needs input [N, C, D, H, W] and weights [M, C/group, kD, kH, kW], got [{}] and [{}]",
                    fmt::join(*x, ", "), fmt::join(*w, ", ")));
    return;
  }
  if (!win->kernel.empty() &&
      (static_cast<std::uint64_t>(win->kernel[0]) != (*w)[2] || static_cast<std::uint64_t>(win->kernel[1]) != (*w)[3] ||
       static_cast<std::uint64_t>(win->kernel[2]) != (*w)[4])) {
    t.problem(fmt::format("kernel_shape [{}] disagrees with the weights' window {}x{}x{}", fmt::join(win->kernel, ", "),
                          (*w)[2], (*w)[3], (*w)[4]));
    return;
  }
  const std::int64_t groups = a.integer("group", 1);
  const auto c = static_cast<std::int64_t>((*x)[1]), m = static_cast<std::int64_t>((*w)[0]),
             c_per_group = static_cast<std::int64_t>((*w)[1]), kd = static_cast<std::int64_t>((*w)[2]);
  if (groups < 1 || c % groups != 0 || c / groups != c_per_group || m % groups != 0) {
    t.problem(fmt::format("weights [{}] do not fit {} input channels in {} groups", fmt::join(*w, ", "), c, groups));
    return;
  }
  std::int64_t d_out = 0;
  const std::string unrolled =
      unroll_depth(t, *x, kd, win->strides[0], win->dilations[0], win->pads[0], win->pads[3], 0.0, d_out);
  if (unrolled.empty()) return;
  const std::string& y = node.output(0);
  const std::string w2d = t.fresh_name(y + "/w2d"), flat = t.fresh_name(y + "/2d");
  t.add_op("reshape", {t.input(1)}, {w2d},
           {{"shape", {m, c_per_group * kd, static_cast<std::int64_t>((*w)[3]), static_cast<std::int64_t>((*w)[4])}}});
  std::vector<std::string> inputs = {unrolled, w2d};
  if (t.has_input(2)) inputs.push_back(t.input(2));
  t.add_op("conv", inputs, {flat},
           {{"stride", {win->strides[1], win->strides[2]}},
            {"pad", {win->pads[1], win->pads[2], win->pads[4], win->pads[5]}},
            {"dilation", {win->dilations[1], win->dilations[2]}},
            {"groups", groups}});
  const auto extent = [&](std::size_t d) { return static_cast<std::int64_t>((*x)[d + 2]); };
  const auto kernel = [&](std::size_t d) { return static_cast<std::int64_t>((*w)[d + 2]); };
  fold_depth_back(
      t, flat, static_cast<std::int64_t>((*x)[0]), d_out, m,
      window_count(extent(1), kernel(1), win->strides[1], win->dilations[1], win->pads[1], win->pads[4], false),
      window_count(extent(2), kernel(2), win->strides[2], win->dilations[2], win->pads[2], win->pads[5], false));
}

void translate_pool_3d(const onnx::NodeProto& node, NodeTranslator& t, bool max) {
  std::set<std::string> allowed = {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"};
  allowed.insert(max ? "storage_order" : "count_include_pad");
  const Attributes a(node, t.problems(), allowed);
  if (!t.arity(1, 1, 1)) return;
  const auto win = read_window_3d(a, t);
  const auto* x = t.input_shape(0);
  if (!win || x == nullptr) return;
  if (x->size() != 5) {
    t.problem(fmt::format("a 3-D pool needs input [N, C, D, H, W], got [{}]", fmt::join(*x, ", ")));
    return;
  }
  if (win->kernel.empty()) t.problem("kernel_shape is required");
  if (win->dilations != std::vector<std::int64_t>{1, 1, 1}) t.problem("dilations other than 1 are not supported");
  if (max && a.integer("storage_order", 0) != 0) t.problem("storage_order 1 is not supported");
  if (win->pads[1] != win->pads[4] || win->pads[2] != win->pads[5]) {
    t.problem(fmt::format("asymmetric pads [{}] are not supported (pools pad top = bottom, left = right)",
                          fmt::join(win->pads, ", ")));
  }
  const bool include_pad = a.integer("count_include_pad", 0) != 0;
  const bool depth_padded = win->pads[0] > 0 || win->pads[3] > 0;
  if (!max && depth_padded && !include_pad) {
    t.problem(
        "an AveragePool padded in depth needs count_include_pad 1 (the count of a window cut by the depth "
        "padding is not supported)");
  }
  const bool ceil = a.integer("ceil_mode", 0) != 0;
  if (!t.problems().empty()) return;
  const std::int64_t kd = win->kernel[0], sd = win->strides[0];
  if (win->pads[0] >= kd || win->pads[3] >= kd) {
    t.problem(
        fmt::format("depth pads [{}, {}] must be smaller than the depth window {}", win->pads[0], win->pads[3], kd));
    return;
  }
  const auto depth = static_cast<std::int64_t>((*x)[2]);
  if (ceil && window_count(depth, kd, sd, 1, win->pads[0], win->pads[3], true) !=
                  window_count(depth, kd, sd, 1, win->pads[0], win->pads[3], false)) {
    t.problem("ceil_mode 1 that adds a partial window in depth is not supported for 3-D pools");
    return;
  }
  // Max: padding never wins (the lowest finite fp16); mean: padding counts as zeros, as count_include_pad says.
  std::int64_t d_out = 0;
  const std::string unrolled = unroll_depth(t, *x, kd, sd, 1, win->pads[0], win->pads[3], max ? -65504.0 : 0.0, d_out);
  if (unrolled.empty()) return;
  const std::string& y = node.output(0);
  const auto n = static_cast<std::int64_t>((*x)[0]), c = static_cast<std::int64_t>((*x)[1]),
             h = static_cast<std::int64_t>((*x)[3]), w = static_cast<std::int64_t>((*x)[4]);
  // The kd slices as separate [N * D_out * C, kd, H, W] channels are pooled together, then combined over kd.
  const std::string planes = t.fresh_name(y + "/planes"), pooled = t.fresh_name(y + "/pooled");
  t.add_op("reshape", {unrolled}, {planes}, {{"shape", {n * d_out * c, kd, h, w}}});
  nlohmann::json attrs = {{"kernel", {win->kernel[1], win->kernel[2]}},
                          {"stride", {win->strides[1], win->strides[2]}},
                          {"pad", {win->pads[1], win->pads[2]}}};
  if (!max) attrs["count_include_pad"] = include_pad;
  if (ceil) attrs["ceil_mode"] = true;
  t.add_op(max ? "max_pool" : "avg_pool", {planes}, {pooled}, std::move(attrs));
  std::string combined = pooled;
  if (kd > 1) {  // over the kd slices: their max, or their mean (each slice's 2-D mean already divided by kH * kW)
    combined = t.fresh_name(y + "/over_depth");
    t.add_op(max ? "reduce_max" : "reduce_mean", {pooled}, {combined}, {{"axes", {1}}, {"keepdims", 1}});
  }
  fold_depth_back(t, combined, n, d_out, c,
                  window_count(h, win->kernel[1], win->strides[1], 1, win->pads[1], win->pads[4], ceil),
                  window_count(w, win->kernel[2], win->strides[2], 1, win->pads[2], win->pads[5], ceil));
}

}  // namespace ldmsim::onnx_import
