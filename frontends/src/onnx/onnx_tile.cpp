// Tile of a run-time tensor, one repeated axis at a time: viewed as [A, 1, n, B] (A the axes before it, B those
// after), expanded to [A, r, n, B] (a view copy), viewed back with the axis r times longer. Repeats come from a
// constant; axes repeated once cost nothing.
#include <fmt/format.h>

#include <cmath>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

void translate_tile(const onnx::NodeProto& node, NodeTranslator& t) {
  const Attributes a(node, t.problems(), {});
  if (!t.arity(2, 2, 1)) return;
  const auto* x = t.input_shape(0);
  const Constant* repeats = t.constant_input(1, "repeats");
  if (x == nullptr || repeats == nullptr) return;
  if (!repeats->integer || repeats->values.size() != x->size()) {
    t.problem(fmt::format("repeats must be {} integers, one per axis of the input", x->size()));
    return;
  }
  std::vector<std::uint64_t> dims = *x;
  std::vector<std::pair<std::size_t, std::uint64_t>> tiled;  // (axis, repeats) of the axes repeated more than once
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const double r = repeats->values[d];
    if (!(r >= 1) || r > 65536 || r != std::floor(r)) {
      t.problem(
          fmt::format("repeats {} on axis {} is not a whole number from 1 to 65536 (a tensor of size 0 "
                      "cannot be made)",
                      r, d));
      return;
    }
    if (r != 1) tiled.emplace_back(d, static_cast<std::uint64_t>(r));
  }
  const std::string& y = node.output(0);
  if (tiled.empty()) {
    t.context().aliases[y] = t.input(0);  // every axis once: the input itself
    return;
  }
  std::string current = t.input(0);
  for (std::size_t i = 0; i < tiled.size(); ++i) {
    const auto [axis, r] = tiled[i];
    std::uint64_t before = 1, after = 1;
    for (std::size_t d = 0; d < axis; ++d) before *= dims[d];
    for (std::size_t d = axis + 1; d < dims.size(); ++d) after *= dims[d];
    const std::string view = t.fresh_name(fmt::format("{}/axis{}", y, axis)),
                      expanded = t.fresh_name(fmt::format("{}/axis{}_repeated", y, axis));
    t.add_op("reshape", {current}, {view}, {{"shape", {before, std::uint64_t{1}, dims[axis], after}}});
    t.add_op("expand", {view}, {expanded}, {{"shape", {before, r, dims[axis], after}}});
    dims[axis] *= r;
    current = i + 1 == tiled.size() ? y : t.fresh_name(fmt::format("{}/after_axis{}", y, axis));
    t.add_op("reshape", {expanded}, {current}, {{"shape", dims}});
  }
}

}  // namespace ldmsim::onnx_import
