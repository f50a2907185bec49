// LogSoftmax as x - max - log(sum(exp(x - max))) over the normalised axes: no log of an fp16 probability that has
// underflowed to 0. Before opset 13 the axes are those from `axis` on (the 2-D view, as Softmax), from 13 the one.
#include <fmt/format.h>

#include <numeric>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

void translate_log_softmax(const onnx::NodeProto& node, NodeTranslator& t, const Context& ctx) {
  const Attributes a(node, t.problems(), {"axis"});
  if (!t.arity(1, 1, 1)) return;
  const auto* x = t.input_shape(0);
  if (x == nullptr) return;
  const std::int64_t given = a.integer("axis", ctx.opset < 13 ? 1 : -1);
  const auto axis = t.axis(given, x->size());
  if (!axis) return;
  std::vector<std::int64_t> axes(ctx.opset < 13 ? x->size() - *axis : 1);
  std::iota(axes.begin(), axes.end(), static_cast<std::int64_t>(*axis));
  const std::string& y = node.output(0);
  const auto name = [&](const char* part) { return t.fresh_name(fmt::format("{}/{}", y, part)); };
  const std::string max = name("max"), shifted = name("shifted"), exps = name("exp"), sum = name("sum"),
                    log_sum = name("log_sum");
  t.add_op("reduce_max", {t.input(0)}, {max}, {{"axes", axes}, {"keepdims", 1}});
  t.add_op("sub", {t.input(0), max}, {shifted});
  t.add_op("exp", {shifted}, {exps});
  t.add_op("reduce_sum", {exps}, {sum}, {{"axes", axes}, {"keepdims", 1}});
  t.add_op("log", {sum}, {log_sum});
  t.add_op("sub", {shifted, log_sum}, {y});
}

}  // namespace ldmsim::onnx_import
