// InstanceNormalization (and so PyTorch's GroupNorm, which exports as one between reshapes) as a layer_norm over
// each (n, c)'s spatial elements: X [N, C, ...] viewed as [N, C, S], normalised over S with a unit scale, viewed
// back, then scaled and shifted per channel. The statistics are layer_norm's own (fp32, the same formula).
#include <fmt/format.h>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

void translate_instance_norm(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx) {
  const Attributes a(node, t.problems(), {"epsilon"});
  if (!t.arity(3, 3, 1)) return;
  const auto* x = t.input_shape(0);
  const auto* scale = t.input_shape(1);
  const auto* bias = t.input_shape(2);
  if (x == nullptr || scale == nullptr || bias == nullptr) return;
  if (x->size() < 3) {
    t.problem(fmt::format("input [{}] needs a batch, a channel and at least one spatial axis", fmt::join(*x, ", ")));
    return;
  }
  const std::uint64_t n = (*x)[0], c = (*x)[1];
  std::uint64_t spatial = 1;
  for (std::size_t d = 2; d < x->size(); ++d) spatial *= (*x)[d];
  if (*scale != std::vector<std::uint64_t>{c} || *bias != std::vector<std::uint64_t>{c}) {
    t.problem(fmt::format("scale [{}] and B [{}] must both be [{}], one value per channel", fmt::join(*scale, ", "),
                          fmt::join(*bias, ", "), c));
    return;
  }
  if (spatial > kMaxFoldedElements) {
    t.problem(fmt::format("{} spatial elements per channel: at most {}", spatial, kMaxFoldedElements));
    return;
  }
  const std::string& y = node.output(0);
  std::string& unit = ctx.unit_scales[spatial];  // one constant of ones per length, shared by the model's nodes
  if (unit.empty()) {
    if (!t.charge_folded(spatial)) return;
    Constant ones;
    ones.dims = {spatial};
    ones.values.assign(spatial, 1.0);
    unit = t.add_constant(fmt::format("instance_norm/unit_scale_{}", spatial), std::move(ones));
  }
  const std::string rows = t.fresh_name(y + "/rows"), normalised = t.fresh_name(y + "/normalised"),
                    back = t.fresh_name(y + "/unscaled"), scaled = t.fresh_name(y + "/scaled"),
                    per_channel_scale = t.fresh_name(y + "/channel_scale"),
                    per_channel_bias = t.fresh_name(y + "/channel_bias");
  std::vector<std::uint64_t> channel(x->size() - 1, 1);  // [C, 1, ..., 1]: broadcast over the spatial axes
  channel[0] = c;
  t.add_op("reshape", {t.input(0)}, {rows}, {{"shape", {n, c, spatial}}});
  t.add_op("layer_norm", {rows, unit}, {normalised}, {{"axis", -1}, {"epsilon", a.real("epsilon", 1e-5F)}});
  t.add_op("reshape", {normalised}, {back}, {{"shape", *x}});
  t.add_op("reshape", {t.input(1)}, {per_channel_scale}, {{"shape", channel}});
  t.add_op("reshape", {t.input(2)}, {per_channel_bias}, {{"shape", channel}});
  t.add_op("mul", {back, per_channel_scale}, {scaled});
  t.add_op("add", {scaled, per_channel_bias}, {y});
}

}  // namespace ldmsim::onnx_import
