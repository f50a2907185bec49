// ReduceL1, ReduceL2, ReduceSumSquare and ReduceLogSumExp as point-wise ops around reduce_sum and reduce_max. The
// L2 norm is taken of x scaled by its largest magnitude (m sqrt(sum((x / m)^2))), so squares of values over 256,
// which overflow fp16, never have to be held; LogSumExp is shifted by the maximum as softmax is. Infinities give
// what they should: an L2 norm of inf, a LogSumExp of -inf over an all -inf slice and of inf over one with +inf.
#include <fmt/format.h>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

namespace {

/// A scalar constant named from `base`.
std::string scalar_constant(NodeTranslator& t, const std::string& base, double value) {
  Constant c;
  c.values = {value};
  return t.add_constant(base, std::move(c));
}

}  // namespace

void translate_norm_reduction(const onnx::NodeProto& node, NodeTranslator& t) {
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
    // The shift is kept finite (within fp16's range), so an all -inf slice gives e^-inf = 0 and log 0 = -inf, and
    // a slice holding +inf gives inf, not inf - inf = NaN.
    const std::string lowest = scalar_constant(t, y + "/lowest", -65504.0),
                      largest = scalar_constant(t, y + "/largest", 65504.0);
    const std::string peak = name("peak"), floored = name("floored"), max = name("max"), shifted = name("shifted"),
                      exps = name("exp"), sum = name("sum"), log_sum = name("log_sum"),
                      max_out = keep ? max : name("max_dropped");
    t.add_op("reduce_max", {x}, {peak}, kept);
    t.add_op("max", {peak, lowest}, {floored});
    t.add_op("min", {floored, largest}, {max});
    t.add_op("sub", {x, max}, {shifted});
    t.add_op("exp", {shifted}, {exps});
    t.add_op("reduce_sum", {exps}, {sum}, reduced);
    t.add_op("log", {sum}, {log_sum});
    if (!keep) t.add_op("reduce_max", {max}, {max_out}, reduced);  // the kept axes of size 1 dropped
    t.add_op("add", {log_sum, max_out}, {y});
  } else {  // ReduceL2
    // The scale is kept within [the smallest fp16 subnormal, the largest fp16 value]: an all-zero slice divides by
    // the first, not by 0, and a slice holding an infinity divides by the second (inf / inf would be NaN), so its
    // norm comes out inf.
    const std::string smallest = scalar_constant(t, y + "/smallest", 1.0 / (1 << 24)),
                      largest = scalar_constant(t, y + "/largest", 65504.0);
    const std::string magnitude = name("abs"), peak = name("peak"), floored = name("floored"), scale = name("scale"),
                      unit = name("unit"), square = name("square"), sum = name("sum"), root = name("root"),
                      scale_out = keep ? scale : name("scale_dropped");
    t.add_op("abs", {x}, {magnitude});
    t.add_op("reduce_max", {magnitude}, {peak}, kept);
    t.add_op("max", {peak, smallest}, {floored});
    t.add_op("min", {floored, largest}, {scale});
    t.add_op("div", {x, scale}, {unit});
    t.add_op("mul", {unit, unit}, {square});
    t.add_op("reduce_sum", {square}, {sum}, reduced);
    t.add_op("sqrt", {sum}, {root});
    if (!keep) t.add_op("reduce_max", {scale}, {scale_out}, reduced);
    t.add_op("mul", {root, scale_out}, {y});
  }
}

}  // namespace ldmsim::onnx_import
