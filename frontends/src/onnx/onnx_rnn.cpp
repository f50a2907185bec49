// ONNX RNN (the plain recurrent layer, PyTorch's nn.RNN: H_t = f(X_t W^T + H_(t-1) R^T + Wb + Rb), f tanh, relu or
// sigmoid) unrolled over its time steps into existing ops: per direction one gemm of every step's input at once
// (with both biases), then per step a gemm of the previous state, an add and the activation; Y and Y_h are the
// steps' states joined by concat. docs/onnx.md lists what is refused.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

namespace {

/// The dims of input i when known.
const std::vector<std::uint64_t>* dims_of(const Context& ctx, const NodeTranslator& t, int i) {
  const auto it = ctx.shapes.find(t.input(i));
  return it == ctx.shapes.end() ? nullptr : &it->second;
}

/// Slice [begin, end) of `x` along `axis` viewed as `shape`.
std::string slice_as(NodeTranslator& t, const std::string& x, std::int64_t axis, std::uint64_t begin, std::uint64_t end,
                     const std::vector<std::uint64_t>& shape, const std::string& base) {
  const std::string sliced = t.fresh_name(base + "/slice"), viewed = t.fresh_name(base);
  t.add_op("slice", {x}, {sliced}, {{"starts", {begin}}, {"ends", {end}}, {"axes", {axis}}});
  t.add_op("reshape", {sliced}, {viewed}, {{"shape", shape}});
  return viewed;
}

}  // namespace

void translate_rnn(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx) {
  const Attributes a(
      node, t.problems(),
      {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"});
  for (const char* unsupported : {"activation_alpha", "activation_beta", "clip"}) {
    if (a.has(unsupported)) t.problem(fmt::format("attribute '{}' is not supported", unsupported));
  }
  if (a.integer("layout", 0) != 0) t.problem("layout 1 (batch first) is not supported: export with layout 0");
  const std::string direction = a.text("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    t.problem(fmt::format("direction '{}' is not an ONNX direction", direction));
  }
  const std::size_t dirs = direction == "bidirectional" ? 2 : 1;
  static const std::map<std::string, std::string> kActivations = {
      {"Tanh", "tanh"}, {"Relu", "relu"}, {"Sigmoid", "sigmoid"}};
  std::vector<std::string> activations(dirs, "tanh");
  if (const auto* attr = a.find("activations")) {
    const std::vector<std::string> given(attr->strings().begin(), attr->strings().end());
    if (given.size() != dirs) {
      t.problem(fmt::format("activations [{}] must name one per direction ({})", fmt::join(given, ", "), dirs));
    } else {
      for (std::size_t d = 0; d < dirs; ++d) {
        const auto f = kActivations.find(given[d]);
        if (f == kActivations.end()) {
          t.problem(fmt::format("activation '{}' is not supported (Tanh, Relu or Sigmoid)", given[d]));
        } else {
          activations[d] = f->second;
        }
      }
    }
  }
  int present = node.input_size();
  while (present > 0 && node.input(present - 1).empty()) --present;
  if (present < 3 || present > 6) {
    t.problem(fmt::format("has {} inputs, expected 3 to 6", present));
    return;
  }
  if (node.output_size() > 2) {
    t.problem(fmt::format("has {} outputs, at most 2 (Y, Y_h)", node.output_size()));
    return;
  }
  const auto* x = dims_of(ctx, t, 0);
  const auto* w = dims_of(ctx, t, 1);
  const auto* r = dims_of(ctx, t, 2);
  if (x == nullptr || x->size() != 3 || w == nullptr || w->size() != 3 || r == nullptr || r->size() != 3) {
    t.problem("X [seq, batch, input], W [dirs, hidden, input] and R [dirs, hidden, hidden] need known shapes");
    return;
  }
  const std::uint64_t seq = (*x)[0], batch = (*x)[1], input = (*x)[2], hidden = (*w)[1];
  if ((*w)[0] != dirs || (*w)[2] != input || *r != std::vector<std::uint64_t>{dirs, hidden, hidden} ||
      (a.has("hidden_size") && static_cast<std::uint64_t>(a.integer("hidden_size", 0)) != hidden)) {
    t.problem(fmt::format("W [{}] and R [{}] do not fit X [{}] with {} direction(s){}", fmt::join(*w, ", "),
                          fmt::join(*r, ", "), fmt::join(*x, ", "), dirs,
                          a.has("hidden_size") ? fmt::format(" and hidden_size {}", a.integer("hidden_size", 0)) : ""));
    return;
  }
  if (t.has_input(3)) {
    const auto* b = dims_of(ctx, t, 3);
    if (b == nullptr || *b != std::vector<std::uint64_t>{dirs, 2 * hidden}) {
      t.problem(fmt::format("B must be [{}, {}]", dirs, 2 * hidden));
      return;
    }
  }
  if (t.has_input(4)) {  // only lengths that are the whole sequence: nothing is packed
    const Constant* lens = t.constant_input(4, "sequence_lens");
    if (lens == nullptr) return;
    if (lens->values.size() != batch) {
      t.problem(
          fmt::format("sequence_lens holds {} lengths, not one per batch element ({})", lens->values.size(), batch));
      return;
    }
    if (std::any_of(lens->values.begin(), lens->values.end(),
                    [&](double v) { return v != static_cast<double>(seq); })) {
      t.problem(fmt::format("sequence_lens shorter than the sequence ({}) are not supported", seq));
      return;
    }
  }
  if (t.has_input(5)) {
    const auto* h0 = dims_of(ctx, t, 5);
    if (h0 == nullptr || *h0 != std::vector<std::uint64_t>{dirs, batch, hidden}) {
      t.problem(fmt::format("initial_h must be [{}, {}, {}]", dirs, batch, hidden));
      return;
    }
  }
  if (seq == 0 || seq > 4096) {
    t.problem(fmt::format("a sequence of {} steps (each step is its own ops: 1 to 4096)", seq));
    return;
  }
  const bool want_y = node.output_size() > 0 && !node.output(0).empty();
  const bool want_h = node.output_size() > 1 && !node.output(1).empty();
  if (!want_y && !want_h) {
    t.problem("names none of its outputs");
    return;
  }
  if (!t.problems().empty()) return;

  const std::string base = want_y ? node.output(0) : node.output(1);
  const auto idx = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  const std::string x2 = t.fresh_name(base + "/x_rows");
  t.add_op("reshape", {t.input(0)}, {x2}, {{"shape", {idx(seq * batch), idx(input)}}});
  std::vector<std::string> y_dirs, h_last;
  for (std::size_t d = 0; d < dirs; ++d) {
    const std::string tag = fmt::format("{}/dir{}", base, d);
    const std::string wd = slice_as(t, t.input(1), 0, d, d + 1, {hidden, input}, tag + "/W");
    const std::string rd = slice_as(t, t.input(2), 0, d, d + 1, {hidden, hidden}, tag + "/R");
    std::vector<std::string> gemm_in = {x2, wd};
    if (t.has_input(3)) {
      const std::string bd = slice_as(t, t.input(3), 0, d, d + 1, {2 * hidden}, tag + "/B");
      const std::string wb = slice_as(t, bd, 0, 0, hidden, {hidden}, tag + "/Wb");
      const std::string rb = slice_as(t, bd, 0, hidden, 2 * hidden, {hidden}, tag + "/Rb");
      gemm_in.push_back(t.fresh_name(tag + "/bias"));
      t.add_op("add", {wb, rb}, {gemm_in.back()});
    }
    // Every step's input term at once: [seq * batch, hidden].
    const std::string xw = t.fresh_name(tag + "/input_term");
    t.add_op("gemm", gemm_in, {xw}, {{"transB", 1}});
    std::string h;
    if (t.has_input(5)) h = slice_as(t, t.input(5), 0, d, d + 1, {batch, hidden}, tag + "/initial_h");
    const bool reverse = d == 1 || direction == "reverse";
    std::vector<std::string> states(seq);
    for (std::uint64_t k = 0; k < seq; ++k) {
      const std::uint64_t step = reverse ? seq - 1 - k : k;
      const std::string at = fmt::format("{}/t{}", tag, step);
      std::string sum = slice_as(t, xw, 0, step * batch, (step + 1) * batch, {batch, hidden}, at + "/input_term");
      if (!h.empty()) {
        const std::string recurrent = t.fresh_name(at + "/recurrent_term");
        t.add_op("gemm", {h, rd}, {recurrent}, {{"transB", 1}});
        const std::string total = t.fresh_name(at + "/sum");
        t.add_op("add", {sum, recurrent}, {total});
        sum = total;
      }
      h = t.fresh_name(at + "/h");
      t.add_op(activations[d], {sum}, {h});
      if (!want_y) continue;
      states[step] = t.fresh_name(at + "/y");
      t.add_op("reshape", {h}, {states[step]}, {{"shape", {1, 1, idx(batch), idx(hidden)}}});
    }
    if (want_h) {
      h_last.push_back(dirs == 1 ? node.output(1) : t.fresh_name(tag + "/y_h"));
      t.add_op("reshape", {h}, {h_last.back()}, {{"shape", {1, idx(batch), idx(hidden)}}});
    }
    if (want_y) {
      y_dirs.push_back(dirs == 1 ? node.output(0) : t.fresh_name(tag + "/y"));
      concat_all(t, states, 0, y_dirs.back());
    }
  }
  if (want_y && dirs > 1) t.add_op("concat", y_dirs, {node.output(0)}, {{"axis", 1}});
  if (want_h && dirs > 1) t.add_op("concat", h_last, {node.output(1)}, {{"axis", 0}});
}

}  // namespace ldmsim::onnx_import
