// Trilu (torch.triu / torch.tril, as causal masks are built): of a small constant, folded at import; of a run-time
// tensor, a where over a constant mask of the last two axes, so masked elements are 0 whatever they held (a
// product with a 0/1 mask would turn inf and NaN into NaN).
#include <fmt/format.h>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

void translate_trilu(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {"upper"});
  if (!t.arity(1, 2, 1)) return;
  std::int64_t k = 0;
  if (t.has_input(1)) {
    const Constant* given = t.constant_input(1, "k");
    if (given == nullptr) return;
    if (!given->integer || given->values.size() != 1) {
      t.problem("k must be one integer");
      return;
    }
    k = saturated_integer(given->values[0]);
  }
  const bool upper = a.integer("upper", 1) != 0;
  const auto* x = t.input_shape(0);
  if (x == nullptr) return;
  if (x->size() < 2) {
    t.problem(fmt::format("input [{}] needs at least 2 axes", fmt::join(*x, ", ")));
    return;
  }
  const std::uint64_t rows = (*x)[x->size() - 2], cols = (*x)[x->size() - 1];
  const auto kept = [&](std::uint64_t i, std::uint64_t j) {
    const auto offset = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);  // dims are checked small
    return upper ? offset >= k : offset <= k;
  };
  if (const Constant* value = t.small_constant(0)) {  // folded
    Constant out = *value;
    out.source = nullptr;
    out.streamed = nullptr;
    for (std::size_t e = 0; e < out.values.size(); ++e) {
      if (!kept((e / cols) % rows, e % cols)) out.values[e] = 0.0;
    }
    t.define(std::move(out));
    return;
  }
  if (rows > kMaxFoldedElements / std::max<std::uint64_t>(cols, 1)) {
    t.problem(fmt::format("a mask of [{}, {}] is more than {} elements", rows, cols, kMaxFoldedElements));
    return;
  }
  if (!t.charge_folded(rows * cols + 1)) return;
  Constant mask;
  mask.dims = {rows, cols};
  mask.integer = mask.boolean = true;
  mask.values.resize(rows * cols);
  for (std::uint64_t i = 0; i < rows; ++i) {
    for (std::uint64_t j = 0; j < cols; ++j) mask.values[i * cols + j] = kept(i, j) ? 1.0 : 0.0;
  }
  Constant zero;  // of the input's type: false for a bool mask, 0 for int32 and fp16
  zero.values = {0.0};
  hold_as(zero, tensor_dtype(t.context(), t.input(0)));
  const std::string& y = node.output(0);
  t.add_op("where",
           {t.add_constant(y + "/mask", std::move(mask)), t.input(0), t.add_constant(y + "/zero", std::move(zero))},
           {y});
}

}  // namespace ldmsim::onnx_import
