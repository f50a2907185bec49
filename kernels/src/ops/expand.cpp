// expand: a tensor repeated along its size-1 axes to a shape (numpy broadcasting, both ways, as ONNX Expand). The
// result is a strided view of the input whose repeated axes have stride 0, copied by view_copy.hpp on every core.
#include <vector>

#include "op_support.hpp"
#include "ops.hpp"
#include "view_copy.hpp"

namespace ldmsim::ops {

namespace {

std::unique_ptr<BoundOp> bind_expand(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"shape"});
  const auto field = attrs.find("shape");
  if (!field) reject(name, "needs attribute shape");
  std::vector<std::uint64_t> target;
  for (const JsonField& item : field->elements()) target.push_back(item.unsigned_integer(1, std::uint64_t{1} << 48));
  if (target.size() > Shape::kMaxRank) field->fail(fmt::format("has {} dims (at most {})", target.size(), 6));
  Shape y;
  try {
    y = broadcast_shapes(in[0], Shape(target, "expand shape"));
  } catch (const ConfigError& e) {
    reject(name, e.what());
  }
  return std::make_unique<ViewOp>(in[0], y, broadcast_view(in[0], y));
}

}  // namespace

void add_expand_kind(OperatorRegistry& registry) {
  registry.add(std::make_unique<FunctionKind>("expand", Arity{1, 1, 1}, bind_expand));
}

}  // namespace ldmsim::ops
