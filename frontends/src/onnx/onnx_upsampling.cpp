// Upsampling nodes of segmentation nets, as ops the device already runs exactly:
// - ConvTranspose is a stride-1 conv over the input with zeros inserted between its elements (reshape to
//   [N, C, H, 1, W, 1], pad the size-1 axes to the stride, reshape back), bordered by the conv's own pads (or
//   cropped by a slice where the transposed conv's pads exceed the kernel), with the weights' in and out channels
//   swapped per group (reshape, transpose, reshape) and flipped (a slice with steps of -1). A 1-D one runs as a
//   2-D one over [N, C, 1, L] between two reshapes, as 1-D Conv does.
// - Resize (nearest or linear, any coordinate transformation ONNX 17 defines but the TensorFlow ones) is
//   Y = A_h X A_w^T with interpolation matrices built here as constants: two matmuls, each output element a sum of
//   the one or two input elements it interpolates (a nearest row holds a single 1, so it is exact). An axis too
//   long for a dense matrix, or before the last two (a volume's depth), is resized by gathers of each output's one
//   or two source elements instead.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {
namespace {

/// The source coordinate of output coordinate `x` along an axis resized from `in` to `out` by `scale`.
double source_coordinate(const std::string& mode, double x, double scale, std::uint64_t in, std::uint64_t out) {
  if (mode == "asymmetric") return x / scale;
  if (mode == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (mode == "pytorch_half_pixel" && out == 1) return 0.0;
  return (x + 0.5) / scale - 0.5;  // half_pixel, pytorch_half_pixel
}

/// The source element that nearest mode `nearest` picks for source coordinate `x` (before clamping), or nullopt for
/// a mode ONNX does not define.
std::optional<std::int64_t> nearest_source(const std::string& nearest, double x) {
  const double f = std::floor(x);
  const bool half = x - f == 0.5;
  if (nearest == "floor") return static_cast<std::int64_t>(f);
  if (nearest == "ceil") return static_cast<std::int64_t>(std::ceil(x));
  if (nearest == "round_prefer_ceil") return static_cast<std::int64_t>(half ? f + 1 : std::round(x));
  if (nearest == "round_prefer_floor") return static_cast<std::int64_t>(half ? f : std::round(x));
  return std::nullopt;
}

/// The [out, in] interpolation matrix of one axis (row-major), or nullopt with a problem.
std::optional<std::vector<double>> interpolation(NodeTranslator& t, const std::string& mode,
                                                 const std::string& transform, const std::string& nearest,
                                                 std::uint64_t in, std::uint64_t out, double scale) {
  std::vector<double> a(out * in, 0.0);
  const auto last = static_cast<std::int64_t>(in) - 1;
  const auto clamp = [last](std::int64_t i) { return std::clamp<std::int64_t>(i, 0, last); };
  for (std::uint64_t o = 0; o < out; ++o) {
    const double x = source_coordinate(transform, static_cast<double>(o), scale, in, out);
    double* row = a.data() + o * in;
    if (mode == "nearest") {
      const auto i = nearest_source(nearest, x);
      if (!i) {
        t.problem(fmt::format("nearest_mode {} is not supported", nearest));
        return std::nullopt;
      }
      row[clamp(*i)] = 1.0;
    } else {
      const double f = std::floor(x);
      const double w = x - f;
      const auto i = static_cast<std::int64_t>(f);
      row[clamp(i)] += 1.0 - w;
      row[clamp(i + 1)] += w;
    }
  }
  return a;
}

/// Axes whose interpolation matrix would have more elements than this (a 1-D signal of thousands of samples) are
/// resized by gathers instead: the matrix's constant and its matmul grow with in x out, the gathers with out.
constexpr std::uint64_t kMaxDenseInterpolation = std::uint64_t{1} << 22;

struct ResizeModes {
  const std::string& mode;
  const std::string& transform;
  const std::string& nearest;
};

/// One axis of a Resize as gathers along it: nearest picks each output's source element; linear blends the two
/// neighbours, y = x[i0] * (1 - w) + x[i1] * w, with the weights of the matrix's rows. False with a problem.
bool resize_by_gathers(NodeTranslator& t, const ResizeModes& m, const std::string& from, const std::string& to,
                       std::size_t axis, std::size_t rank, std::uint64_t in, std::uint64_t out, double scale) {
  const bool linear = m.mode == "linear";
  if (!t.charge_folded(out * (linear ? 4 : 1))) return false;
  const auto last = static_cast<std::int64_t>(in) - 1;
  const auto clamp = [last](std::int64_t i) { return static_cast<double>(std::clamp<std::int64_t>(i, 0, last)); };
  Constant first, second, w_first, w_second;
  first.dims = second.dims = {out};
  first.integer = second.integer = true;
  std::vector<std::uint64_t> weight_dims(rank - axis, 1);  // [out] on the last axis, [out, 1] on the one before
  weight_dims[0] = out;
  w_first.dims = w_second.dims = weight_dims;
  for (std::uint64_t o = 0; o < out; ++o) {
    const double x = source_coordinate(m.transform, static_cast<double>(o), scale, in, out);
    const double f = std::floor(x);
    if (!linear) {
      const auto i = nearest_source(m.nearest, x);
      if (!i) {
        t.problem(fmt::format("nearest_mode {} is not supported", m.nearest));
        return false;
      }
      first.values.push_back(clamp(*i));
      continue;
    }
    first.values.push_back(clamp(static_cast<std::int64_t>(f)));
    second.values.push_back(clamp(static_cast<std::int64_t>(f) + 1));
    w_first.values.push_back(1.0 - (x - f));
    w_second.values.push_back(x - f);
  }
  const auto gather = [&](Constant indices, const std::string& name) {
    const std::string picked = linear ? t.fresh_name(fmt::format("{}/{}", to, name)) : to;
    t.add_op("gather", {from, t.add_constant(fmt::format("{}/{}_index", to, name), std::move(indices))}, {picked},
             {{"axis", static_cast<std::int64_t>(axis)}});
    return picked;
  };
  const std::string low = gather(std::move(first), "low");
  if (!linear) return true;
  const std::string high = gather(std::move(second), "high");
  const std::string low_part = t.fresh_name(to + "/low_part"), high_part = t.fresh_name(to + "/high_part");
  t.add_op("mul", {low, t.add_constant(to + "/low_weight", std::move(w_first))}, {low_part});
  t.add_op("mul", {high, t.add_constant(to + "/high_weight", std::move(w_second))}, {high_part});
  t.add_op("add", {low_part, high_part}, {to});
  return true;
}

}  // namespace

void translate_conv_transpose(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(
      node, t.problems(),
      {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"});
  if (!t.arity(2, 3, 1)) return;
  if (a.has("output_shape")) t.problem("output_shape is not supported (give pads and output_padding)");
  const std::string auto_pad = a.text("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") t.problem(fmt::format("auto_pad {} is not supported", auto_pad));
  const auto* x_given = t.input_shape(0);
  const auto* w_given = t.input_shape(1);
  if (x_given == nullptr || w_given == nullptr || !t.problems().empty()) return;
  const bool one_d = x_given->size() == 3 && w_given->size() == 3;
  if (!one_d && (x_given->size() != 4 || w_given->size() != 4)) {
    t.problem(
        "only 1-D and 2-D ConvTranspose are supported (input [N, C, L] or [N, C, H, W], weights [C, M/group, "
        "kL] or [C, M/group, kH, kW])");
    return;
  }
  if (!kernel_is_window(t, a.integers("kernel_shape", {}), *w_given)) return;
  // A 1-D ConvTranspose runs as a 2-D one over [N, C, 1, L] with a [1, kL] window (as 1-D Conv does): every
  // attribute gains a leading entry for the unit axis, which its zero pads and unit stride leave at size 1.
  const std::size_t dims = one_d ? 1 : 2;
  const auto per_axis = [&](const char* name, std::int64_t fallback, std::size_t per_dim) {
    std::vector<std::int64_t> v = a.integers(name, std::vector<std::int64_t>(dims * per_dim, fallback));
    if (!one_d) return v;
    if (v.size() != per_dim) return std::vector<std::int64_t>{};  // refused below, with the 1-D counts
    if (per_dim == 1) return std::vector<std::int64_t>{fallback, v[0]};
    return std::vector<std::int64_t>{0, v[0], 0, v[1]};  // pads [begin, end] -> [top, left, bottom, right]
  };
  const auto strides = per_axis("strides", 1, 1), dilations = per_axis("dilations", 1, 1);
  auto pads = per_axis("pads", 0, 2);
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  const auto out_pad = per_axis("output_padding", 0, 1);
  const std::int64_t groups = a.integer("group", 1);
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || out_pad.size() != 2) {
    t.problem(one_d ? "strides, dilations and output_padding need 1 entry, pads 2"
                    : "strides, dilations and output_padding need 2 entries, pads 4");
    return;
  }
  for (std::size_t d = 0; d < 2; ++d) {
    if (strides[d] < 1 || dilations[d] < 1 || out_pad[d] < 0 || out_pad[d] >= std::max(strides[d], dilations[d]) ||
        pads[d] < 0 || pads[d + 2] < 0 || strides[d] > 64) {
      t.problem("strides (1 to 64) and dilations must be positive, pads non-negative, output_padding below the stride");
      return;
    }
  }
  const auto unit_axis = [](const std::vector<std::uint64_t>& shape) {
    return std::vector<std::uint64_t>{shape[0], shape[1], 1, shape[2]};
  };
  const std::vector<std::uint64_t> x_shape = one_d ? unit_axis(*x_given) : *x_given;
  const std::vector<std::uint64_t> w_shape = one_d ? unit_axis(*w_given) : *w_given;
  const auto* x = &x_shape;
  const auto* w = &w_shape;
  const auto c = static_cast<std::int64_t>((*x)[1]);
  if (groups < 1 || c % groups != 0 || static_cast<std::int64_t>((*w)[0]) != c) {
    t.problem(
        fmt::format("weights [{}] do not fit {} input channels in {} groups", fmt::join(*w_given, ", "), c, groups));
    return;
  }
  const std::int64_t m_per_group = static_cast<std::int64_t>((*w)[1]), kh = static_cast<std::int64_t>((*w)[2]),
                     kw = static_cast<std::int64_t>((*w)[3]);
  const std::string& y = one_d ? t.fresh_name(node.output(0) + "/2d") : node.output(0);
  // The input with stride - 1 zeros after each element along H and W.
  std::string xu = t.input(0);
  std::string weights = t.input(1);
  if (one_d) {
    xu = t.fresh_name(t.input(0) + "/2d");
    weights = t.fresh_name(t.input(1) + "/2d");
    t.add_op("reshape", {t.input(0)}, {xu}, {{"shape", {0, 0, 1, -1}}});
    t.add_op("reshape", {t.input(1)}, {weights}, {{"shape", {0, 0, 1, -1}}});
  }
  const std::int64_t n = static_cast<std::int64_t>((*x)[0]), h = static_cast<std::int64_t>((*x)[2]),
                     wd = static_cast<std::int64_t>((*x)[3]);
  if (strides[0] > 1 || strides[1] > 1) {
    const std::string x6 = t.fresh_name(y + "/x6"), padded = t.fresh_name(y + "/zeros"), up = t.fresh_name(y + "/up");
    t.add_op("reshape", {xu}, {x6}, {{"shape", {n, c, h, 1, wd, 1}}});
    t.add_op("pad", {x6}, {padded}, {{"pads", {0, 0, 0, 0, 0, 0, 0, 0, 0, strides[0] - 1, 0, strides[1] - 1}}});
    t.add_op("reshape", {padded}, {up}, {{"shape", {n, c, h * strides[0], wd * strides[1]}}});
    xu = up;
  }
  // The conv's pads on the upsampled input (which already ends in stride - 1 zeros); negative ones crop it.
  std::int64_t conv_pads[4];
  for (std::size_t d = 0; d < 2; ++d) {
    const std::int64_t reach = dilations[d] * ((d == 0 ? kh : kw) - 1);
    conv_pads[d] = reach - pads[d];
    conv_pads[d + 2] = reach - pads[d + 2] + out_pad[d] - (strides[d] - 1);
  }
  if (conv_pads[0] < 0 || conv_pads[1] < 0 || conv_pads[2] < 0 || conv_pads[3] < 0) {
    const std::string cropped = t.fresh_name(y + "/cropped");
    const std::int64_t extent[2] = {h * strides[0], wd * strides[1]};
    std::vector<std::int64_t> starts, ends;
    for (std::size_t d = 0; d < 2; ++d) {
      starts.push_back(std::max<std::int64_t>(0, -conv_pads[d]));
      ends.push_back(extent[d] + std::min<std::int64_t>(0, conv_pads[d + 2]));
      conv_pads[d] = std::max<std::int64_t>(0, conv_pads[d]);
      conv_pads[d + 2] = std::max<std::int64_t>(0, conv_pads[d + 2]);
    }
    t.add_op("slice", {xu}, {cropped}, {{"starts", starts}, {"ends", ends}, {"axes", {2, 3}}});
    xu = cropped;
  }
  // Weights [C, M/g, kH, kW] -> [M, C/g, kH, kW], flipped in both spatial axes.
  const std::string swapped = t.fresh_name(y + "/w_swapped"), flipped = t.fresh_name(y + "/w_flipped");
  if (groups == 1) {
    t.add_op("transpose", {weights}, {swapped}, {{"perm", {1, 0, 2, 3}}});
  } else {
    const std::string w5 = t.fresh_name(y + "/w5"), w5t = t.fresh_name(y + "/w5t");
    t.add_op("reshape", {weights}, {w5}, {{"shape", {groups, c / groups, m_per_group, kh, kw}}});
    t.add_op("transpose", {w5}, {w5t}, {{"perm", {0, 2, 1, 3, 4}}});
    t.add_op("reshape", {w5t}, {swapped}, {{"shape", {groups * m_per_group, c / groups, kh, kw}}});
  }
  constexpr std::int64_t kFirst = std::numeric_limits<std::int64_t>::min();
  t.add_op("slice", {swapped}, {flipped},
           {{"starts", {-1, -1}}, {"ends", {kFirst, kFirst}}, {"axes", {2, 3}}, {"steps", {-1, -1}}});
  std::vector<std::string> inputs = {xu, flipped};
  if (t.has_input(2)) inputs.push_back(t.input(2));
  t.add_op("conv", inputs, {y},
           {{"stride", {1, 1}},
            {"pad", {conv_pads[0], conv_pads[1], conv_pads[2], conv_pads[3]}},
            {"dilation", {dilations[0], dilations[1]}},
            {"groups", groups}});
  if (one_d) t.add_op("reshape", {y}, {node.output(0)}, {{"shape", {0, 0, -1}}});
}

void translate_resize(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx) {
  const Attributes a(node, t.problems(),
                     {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                      "mode", "nearest_mode"});
  if (!t.arity(2, 4, 1)) return;
  const std::string mode = a.text("mode", "nearest");
  const std::string transform = a.text("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = a.text("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear") t.problem(fmt::format("mode {} is not supported (nearest, linear)", mode));
  if (transform != "half_pixel" && transform != "pytorch_half_pixel" && transform != "align_corners" &&
      transform != "asymmetric") {
    t.problem(fmt::format("coordinate_transformation_mode {} is not supported", transform));
  }
  if (a.integer("exclude_outside", 0) != 0) t.problem("exclude_outside 1 is not supported");
  const auto* x = t.input_shape(0);
  if (x == nullptr || !t.problems().empty()) return;
  const std::size_t rank = x->size();
  std::vector<double> scales(rank, 1.0);
  std::vector<std::uint64_t> sizes(*x);
  if (t.has_input(3)) {  // sizes
    const Constant* given = t.constant_input(3, "sizes");
    if (given == nullptr) return;
    if (given->values.size() != rank) {
      t.problem(fmt::format("sizes has {} entries for rank {}", given->values.size(), rank));
      return;
    }
    for (std::size_t d = 0; d < rank; ++d) {
      const auto v = exact_integer(given->values[d]);
      if (!v || *v < 1 || *v > (std::int64_t{1} << 24)) {
        t.problem(fmt::format("size {} is not a positive integer up to 2^24", given->values[d]));
        return;
      }
      sizes[d] = static_cast<std::uint64_t>(*v);
      scales[d] = static_cast<double>(sizes[d]) / static_cast<double>((*x)[d]);
    }
  } else if (t.has_input(2)) {  // scales
    const Constant* given = t.constant_input(2, "scales");
    if (given == nullptr) return;
    if (given->values.size() != rank) {
      t.problem(fmt::format("scales has {} entries for rank {}", given->values.size(), rank));
      return;
    }
    for (std::size_t d = 0; d < rank; ++d) {
      const double s = given->values[d];
      const double out = std::floor(static_cast<double>((*x)[d]) * s);
      if (!(s > 0) || !(out >= 1) || out > static_cast<double>(std::uint64_t{1} << 24)) {
        t.problem(fmt::format("scale {} of axis {} gives no output or more than 2^24", s, d));
        return;
      }
      scales[d] = s;
      sizes[d] = static_cast<std::uint64_t>(out);
    }
  } else {
    t.problem("needs scales or sizes");
    return;
  }
  const std::string& y = node.output(0);
  std::string current = t.input(0);
  // Along the last axis: X [..., W] @ A_w^T [W, W'].
  struct Step {
    std::size_t axis;
    bool right;
  };
  std::vector<Step> steps;
  const auto resized = [&](std::size_t d) { return sizes[d] != (*x)[d] || scales[d] != 1.0; };
  if (resized(rank - 1)) steps.push_back({rank - 1, true});
  if (rank >= 2 && resized(rank - 2)) steps.push_back({rank - 2, false});
  for (std::size_t d = rank >= 2 ? rank - 2 : 0; d-- > 0;) {
    if (resized(d)) steps.push_back({d, false});  // the depth of a volume (trilinear): gathers
  }
  if (steps.empty()) {
    ctx.aliases[y] = t.input(0);
    return;
  }
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::size_t axis = steps[k].axis;
    const std::uint64_t in = (*x)[axis], out = sizes[axis];
    const std::string result = k + 1 == steps.size() ? y : t.fresh_name(y + "/resized_w");
    // A long signal, or an axis before the last two: gathers by index, no dense matrix.
    if (in > kMaxDenseInterpolation / out || axis + 2 < rank) {  // in * out could wrap: out <= 2^24, in any
      if (!resize_by_gathers(t, {mode, transform, nearest}, current, result, axis, rank, in, out, scales[axis])) return;
      current = result;
      continue;
    }
    if (!t.charge_folded(in * out)) return;
    const auto matrix = interpolation(t, mode, transform, nearest, in, out, scales[axis]);
    if (!matrix) return;
    Constant c;
    if (steps[k].right) {  // A^T: [in, out]
      c.dims = {in, out};
      c.values.resize(in * out);
      for (std::uint64_t o = 0; o < out; ++o)
        for (std::uint64_t i = 0; i < in; ++i) c.values[i * out + o] = (*matrix)[o * in + i];
    } else {
      c.dims = {out, in};
      c.values = *matrix;
    }
    const std::string name = t.add_constant(fmt::format("{}/interpolation{}", y, axis), std::move(c));
    if (steps[k].right) {
      t.add_op("matmul", {current, name}, {result});
    } else {
      t.add_op("matmul", {name, current}, {result});
    }
    current = result;
  }
}

}  // namespace ldmsim::onnx_import
