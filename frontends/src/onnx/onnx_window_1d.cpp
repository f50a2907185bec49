// 1-D Conv, MaxPool and AveragePool (a speech-style Conv1d stack) through the 2-D engine: [N, C, L] is read as
// [N, C, 1, L], the window as [1, k], which computes exactly the same sums; reshapes around the op restore the
// 1-D shapes (a reshape hands its buffer over, so they cost nothing when nothing else reads the tensors).
#include <fmt/format.h>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {
namespace {

/// The 1-D window attributes: kernel_shape [k], strides [s], dilations [d], pads [begin, end].
struct Window1d {
  std::int64_t kernel = 0, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
};

std::optional<Window1d> read_window_1d(const Attributes& a, NodeTranslator& t) {
  const auto one = [&](const char* name, std::int64_t fallback, std::size_t size) -> std::vector<std::int64_t> {
    auto v = a.integers(name, std::vector<std::int64_t>(size, fallback));
    if (v.size() != size) t.problem(fmt::format("{} must have {} entries for a 1-D window", name, size));
    return v;
  };
  const std::string auto_pad = a.text("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    t.problem(fmt::format("auto_pad {} is not supported (NOTSET or VALID; export with explicit pads)", auto_pad));
  }
  const auto kernel = a.integers("kernel_shape", {});
  const auto strides = one("strides", 1, 1);
  const auto dilations = one("dilations", 1, 1);
  auto pads = one("pads", 0, 2);
  if (!t.problems().empty()) return std::nullopt;
  if (auto_pad == "VALID") pads = {0, 0};
  Window1d w{kernel.empty() ? 0 : kernel[0], strides[0], dilations[0], pads[0], pads[1]};
  if (kernel.size() > 1 || w.kernel < 0 || w.stride < 1 || w.dilation < 1 || w.pad_begin < 0 || w.pad_end < 0) {
    t.problem("kernel_shape, strides, dilations and pads must be non-negative (strides and dilations positive)");
    return std::nullopt;
  }
  return w;
}

/// x as [N, C, 1, L] under a fresh name.
std::string as_2d(NodeTranslator& t, int input) {
  const std::string x4 = t.fresh_name(t.node().input(input) + "/2d");
  t.add_op("reshape", {t.input(input)}, {x4}, {{"shape", {0, 0, 1, -1}}});
  return x4;
}

/// The op's [N, C', 1, L'] output reshaped to the node's [N, C', L'].
void back_to_1d(NodeTranslator& t, const std::string& y4) {
  t.add_op("reshape", {y4}, {t.node().output(0)}, {{"shape", {0, 0, -1}}});
}

}  // namespace

std::size_t window_dims(const onnx::NodeProto& node, const Context& ctx) {
  if (node.input_size() < 1) return 0;
  for (const auto& a : node.attribute()) {
    if (a.name() == "kernel_shape") return static_cast<std::size_t>(a.ints_size());
  }
  const auto it = ctx.shapes.find(resolve(ctx, node.input(0)));
  return it != ctx.shapes.end() && it->second.size() >= 2 ? it->second.size() - 2 : 0;
}

void translate_conv_1d(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  if (!t.arity(2, 3, 1)) return;
  const auto w = read_window_1d(a, t);
  if (!w) return;
  if (const auto weights = t.context().shapes.find(t.input(1));
      weights != t.context().shapes.end() && weights->second.size() == 3 &&
      !kernel_is_window(t, w->kernel == 0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{w->kernel},
                        weights->second)) {
    return;
  }
  const std::string x4 = as_2d(t, 0), w4 = as_2d(t, 1), y4 = t.fresh_name(node.output(0) + "/2d");
  std::vector<std::string> inputs = {x4, w4};
  if (t.has_input(2)) inputs.push_back(t.input(2));
  t.add_op("conv", inputs, {y4},
           {{"stride", {1, w->stride}},
            {"pad", {0, w->pad_begin, 0, w->pad_end}},
            {"dilation", {1, w->dilation}},
            {"groups", a.integer("group", 1)}});
  back_to_1d(t, y4);
}

void translate_pool_1d(const onnx::NodeProto& node, NodeTranslator& t, bool max) {
  std::set<std::string> allowed = {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"};
  allowed.insert(max ? "storage_order" : "count_include_pad");
  const Attributes a(node, t.problems(), allowed);
  if (!t.arity(1, 1, 1)) return;
  const auto w = read_window_1d(a, t);
  if (!w) return;
  if (w->kernel == 0) t.problem("kernel_shape is required");
  if (!max && w->dilation != 1) t.problem("dilations other than 1 (AveragePool takes them from opset 19)");
  if (w->pad_begin != w->pad_end) {
    t.problem(fmt::format("asymmetric pads [{}, {}] are not supported (pools pad both ends alike)", w->pad_begin,
                          w->pad_end));
  }
  if (!t.problems().empty()) return;
  const std::string x4 = as_2d(t, 0), y4 = t.fresh_name(node.output(0) + "/2d");
  nlohmann::json attrs = {{"kernel", {1, w->kernel}}, {"stride", {1, w->stride}}, {"pad", {0, w->pad_begin}}};
  if (!max) attrs["count_include_pad"] = a.integer("count_include_pad", 0) != 0;
  if (max && w->dilation != 1) attrs["dilation"] = {1, w->dilation};
  if (a.integer("ceil_mode", 0) != 0) attrs["ceil_mode"] = true;
  t.add_op(max ? "max_pool" : "avg_pool", {x4}, {y4}, std::move(attrs));
  back_to_1d(t, y4);
}

}  // namespace ldmsim::onnx_import
