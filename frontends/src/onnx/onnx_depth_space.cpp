// DepthToSpace (PyTorch's PixelShuffle) and SpaceToDepth as a reshape to six axes, one transpose and a reshape
// back: only the transpose moves data.
#include <fmt/format.h>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

void translate_depth_space(const onnx::NodeProto& node, NodeTranslator& t, bool to_space) {
  const Attributes a(node, t.problems(),
                     to_space ? std::set<std::string>{"blocksize", "mode"} : std::set<std::string>{"blocksize"});
  if (!t.arity(1, 1, 1)) return;
  if (!a.has("blocksize")) t.problem("attribute 'blocksize' is required");
  const std::string mode = a.text("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") t.problem(fmt::format("mode {} is not DCR or CRD", mode));
  const auto* x = t.input_shape(0);
  if (x == nullptr || !t.problems().empty()) return;
  const std::int64_t b = a.integer("blocksize", 0);
  if (x->size() != 4 || b < 1 || b > 4096) {
    t.problem(fmt::format("needs a 4-D input [N, C, H, W] and a blocksize from 1 to 4096 (input [{}], blocksize {})",
                          fmt::join(*x, ", "), b));
    return;
  }
  const auto bs = static_cast<std::uint64_t>(b);
  const std::uint64_t n = (*x)[0], c = (*x)[1], h = (*x)[2], w = (*x)[3];
  std::vector<std::uint64_t> six;
  std::vector<std::int64_t> perm;
  std::vector<std::uint64_t> out;
  if (to_space) {
    if (c % (bs * bs) != 0) {
      t.problem(fmt::format("{} channels are not a multiple of blocksize^2 = {}", c, bs * bs));
      return;
    }
    const std::uint64_t k = c / (bs * bs);
    six =
        mode == "DCR" ? std::vector<std::uint64_t>{n, bs, bs, k, h, w} : std::vector<std::uint64_t>{n, k, bs, bs, h, w};
    perm = mode == "DCR" ? std::vector<std::int64_t>{0, 3, 4, 1, 5, 2} : std::vector<std::int64_t>{0, 1, 4, 2, 5, 3};
    out = {n, k, h * bs, w * bs};
  } else {
    if (h % bs != 0 || w % bs != 0) {
      t.problem(fmt::format("H {} and W {} must be multiples of blocksize {}", h, w, bs));
      return;
    }
    six = {n, c, h / bs, bs, w / bs, bs};
    perm = {0, 3, 5, 1, 2, 4};
    out = {n, c * bs * bs, h / bs, w / bs};
  }
  const std::string& y = node.output(0);
  const std::string split = t.fresh_name(y + "/blocks"), moved = t.fresh_name(y + "/moved");
  t.add_op("reshape", {t.input(0)}, {split}, {{"shape", six}});
  t.add_op("transpose", {split}, {moved}, {{"perm", perm}});
  t.add_op("reshape", {moved}, {y}, {{"shape", out}});
}

}  // namespace ldmsim::onnx_import
