// ReduceL1, ReduceL2, ReduceSumSquare and ReduceLogSumExp as point-wise ops around reduce_sum and reduce_max. The
// L2 norm is taken of x scaled by its largest magnitude (m sqrt(sum((x / m)^2))), so squares of values over 256,
// which overflow fp16, never have to be held; LogSumExp is shifted by the maximum as softmax is.
#include <fmt/format.h>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

void translate_norm_reduction(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx) {
  const Attributes a(node, t.problems(), {"axes", "keepdims"});
  if (!t.arity(1, 1, 1)) return;
  const std::string& type = node.op_type();
  const std::string& y = node.output(0);
  const bool keep = a.integer("keepdims", 1) != 0;
  nlohmann::json kept = {{"keepdims", 1}};
  if (a.has("axes")) kept["axes"] = a.integers("axes", {});
  nlohmann::json reduced = kept;
  reduced["keepdims"] = keep ? 1 : 0;
  const auto name = [&](const char* part) { return t.fresh_name(fmt::format("{}/{}", y, part)); };
  const std::string x = t.input(0);
  if (type == "ReduceL1") {
    const std::string magnitude = name("abs");
    t.add_op("abs", {x}, {magnitude});
    t.add_op("reduce_sum", {magnitude}, {y}, reduced);
  } else if (type == "ReduceSumSquare") {
    const std::string square = name("square");
    t.add_op("mul", {x, x}, {square});
    t.add_op("reduce_sum", {square}, {y}, reduced);
  } else if (type == "ReduceLogSumExp") {
    const std::string max = name("max"), shifted = name("shifted"), exps = name("exp"), sum = name("sum"),
                      log_sum = name("log_sum"), max_out = keep ? max : name("max_dropped");
    t.add_op("reduce_max", {x}, {max}, kept);
    t.add_op("sub", {x, max}, {shifted});
    t.add_op("exp", {shifted}, {exps});
    t.add_op("reduce_sum", {exps}, {sum}, reduced);
    t.add_op("log", {sum}, {log_sum});
    if (!keep) t.add_op("reduce_max", {max}, {max_out}, reduced);  // the kept axes of size 1 dropped
    t.add_op("add", {log_sum, max_out}, {y});
  } else {          // ReduceL2
    Constant tiny;  // the smallest fp16 subnormal: an all-zero slice divides by it, not by 0
    tiny.values = {1.0 / (1 << 24)};
    const std::string floor = name("smallest");
    ctx.shapes[floor] = {};
    ctx.constants[floor] = std::move(tiny);
    const std::string magnitude = name("abs"), peak = name("peak"), scale = name("scale"), unit = name("unit"),
                      square = name("square"), sum = name("sum"), root = name("root"),
                      scale_out = keep ? scale : name("scale_dropped");
    t.add_op("abs", {x}, {magnitude});
    t.add_op("reduce_max", {magnitude}, {peak}, kept);
    t.add_op("max", {peak, floor}, {scale});
    t.add_op("div", {x, scale}, {unit});
    t.add_op("mul", {unit, unit}, {square});
    t.add_op("reduce_sum", {square}, {sum}, reduced);
    t.add_op("sqrt", {sum}, {root});
    if (!keep) t.add_op("reduce_max", {scale}, {scale_out}, reduced);
    t.add_op("mul", {root, scale_out}, {y});
  }
}

}  // namespace ldmsim::onnx_import
