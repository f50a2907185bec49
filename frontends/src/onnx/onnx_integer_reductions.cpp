// Reductions of int32 tensors (a mask's length as attention_mask.sum(-1), GPT-2's and CLIP's pooling position as the
// argmax of token ids or of ids == pad) from the int32 element-wise ops the device runs exactly: each reduced axis
// halves step by step, max or min of two slices (overlapping by one for an odd length, which changes neither) or
// the sum of two halves (an odd length's last element set aside and added at the end), wrapping to 32 bits as the
// int32 ops do. ArgMax and ArgMin find the extreme value so, then the first (or last) index equal to it by arg_max
// over the 0/1 comparison held as fp16.
#include <fmt/format.h>

#include <algorithm>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

namespace {

/// `from` (of `dims`) reduced along `axis` to extent 1 by `op` ("add", "max" or "min"); returns the result's name.
std::string halve_along(NodeTranslator& t, std::string from, std::vector<std::uint64_t>& dims, std::size_t axis,
                        const std::string& op, const std::string& base) {
  const auto axis_list = std::vector<std::int64_t>{static_cast<std::int64_t>(axis)};
  const auto slice = [&](const std::string& x, std::uint64_t begin, std::uint64_t end) {
    const std::string out = t.fresh_name(base + "/part");
    t.add_op("slice", {x}, {out},
             {{"starts", {static_cast<std::int64_t>(begin)}},
              {"ends", {static_cast<std::int64_t>(end)}},
              {"axes", axis_list}});
    return out;
  };
  std::vector<std::string> set_aside;
  std::uint64_t length = dims[axis];
  while (length > 1) {
    std::uint64_t half = (length + 1) / 2, second = length - half;  // max/min: the halves overlap when odd
    if (op == "add" && length % 2 == 1) {
      set_aside.push_back(slice(from, length - 1, length));
      half = second = (length - 1) / 2;
    }
    const std::string first_half = slice(from, 0, half), second_half = slice(from, second, second + half);
    from = t.fresh_name(base + "/" + op);
    t.add_op(op, {first_half, second_half}, {from});
    length = half;
  }
  for (const std::string& last : set_aside) {
    const std::string sum = t.fresh_name(base + "/add");
    t.add_op("add", {from, last}, {sum});
    from = sum;
  }
  dims[axis] = 1;
  return from;
}

}  // namespace

void reduce_integers(NodeTranslator& t, const std::string& op, std::vector<std::size_t> axes, bool keepdims) {
  const auto* shape = t.input_shape(0);
  if (shape == nullptr) return;
  std::vector<std::uint64_t> dims = *shape;
  if (axes.empty()) {
    for (std::size_t d = 0; d < dims.size(); ++d) axes.push_back(d);
  }
  const std::string& y = t.node().output(0);
  std::string current = t.input(0);
  for (const std::size_t axis : axes) current = halve_along(t, current, dims, axis, op, y);
  std::vector<std::int64_t> out;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (keepdims || !reduced) out.push_back(static_cast<std::int64_t>(dims[d]));
  }
  t.add_op("reshape", {current}, {y}, {{"shape", out}});
}

void arg_of_integers(NodeTranslator& t, bool max, std::size_t axis, bool keepdims, bool last) {
  const auto* shape = t.input_shape(0);
  if (shape == nullptr) return;
  std::vector<std::uint64_t> dims = *shape;
  const std::string& y = t.node().output(0);
  const std::string extreme = halve_along(t, t.input(0), dims, axis, max ? "max" : "min", y);
  const std::string hit = t.fresh_name(y + "/is_extreme"), ones = t.fresh_name(y + "/as_f16");
  t.add_op("equal", {t.input(0), extreme}, {hit});
  t.add_op("cast", {hit}, {ones}, {{"to", "f16"}});
  t.add_op(
      "arg_max", {ones}, {y},
      {{"axis", static_cast<std::int64_t>(axis)}, {"keepdims", keepdims ? 1 : 0}, {"select_last_index", last ? 1 : 0}});
}

}  // namespace ldmsim::onnx_import
