// ONNX LSTM and GRU nodes as lstm / gru ops (docs/onnx.md). ONNX's optional inputs may be left out in the middle
// (an initial_h without B); ldmsim's ops take them in order, so a missing B becomes a zero constant. Optional
// outputs left unnamed get names of their own (nothing reads them). sequence_lens must be absent or a constant;
// lengths shorter than the sequence are translated in onnx_recurrent_lengths.cpp.
#include <fmt/format.h>

#include "ldmsim/kernels/recurrent.hpp"
#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

namespace {

/// A name no tensor of the model has yet, made from `base`.
std::string fresh_name(const Context& ctx, std::string base) {
  while (ctx.reserved.contains(base) || ctx.shapes.contains(base) || ctx.constants.contains(base) ||
         ctx.shadow.find(base)) {
    base += "_";
  }
  return base;
}

/// The dims of input i when known.
const std::vector<std::uint64_t>* known_dims(const Context& ctx, const NodeTranslator& t, int i) {
  const auto it = ctx.shapes.find(t.input(i));
  return it == ctx.shapes.end() ? nullptr : &it->second;
}

}  // namespace

void translate_recurrent(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx, CellKind kind) {
  const bool lstm = kind == CellKind::kLstm;
  std::set<std::string> allowed = {"activation_alpha", "activation_beta", "activations", "clip",
                                   "direction",        "hidden_size",     "layout"};
  allowed.insert(lstm ? "input_forget" : "linear_before_reset");
  const Attributes a(node, t.problems(), allowed);
  for (const char* unsupported : {"activation_alpha", "activation_beta", "clip"}) {
    if (a.has(unsupported)) t.problem(fmt::format("attribute '{}' is not supported", unsupported));
  }
  if (a.integer("layout", 0) != 0) t.problem("layout 1 (batch first) is not supported: export with layout 0");
  if (lstm && a.integer("input_forget", 0) != 0) t.problem("input_forget 1 is not supported");
  const std::string direction = a.text("direction", "forward");
  const std::size_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    t.problem(fmt::format("direction '{}' is not an ONNX direction", direction));
  }
  if (a.has("activations")) {  // only the defaults, spelled out
    std::vector<std::string> given, defaults;
    if (const auto* attr = a.find("activations")) given.assign(attr->strings().begin(), attr->strings().end());
    for (std::size_t d = 0; d < dirs; ++d) {
      defaults.insert(defaults.end(), {"Sigmoid", "Tanh"});
      if (lstm) defaults.push_back("Tanh");
    }
    if (given != defaults) {
      t.problem(fmt::format("activations [{}] are not supported (only the defaults [{}])", fmt::join(given, ", "),
                            fmt::join(defaults, ", ")));
    }
  }
  const int max_inputs = lstm ? 8 : 6;
  int present = node.input_size();
  while (present > 0 && node.input(present - 1).empty()) --present;
  if (present < 3 || present > max_inputs) {
    t.problem(fmt::format("has {} inputs, expected 3 to {}", present, max_inputs));
    return;
  }
  if (lstm && t.has_input(7)) t.problem("peephole weights (input P) are not supported");
  std::vector<std::uint64_t> lengths;  // per batch element, when some is shorter than the sequence
  std::uint64_t seq = 0;
  if (t.has_input(4)) {
    const auto* x = known_dims(ctx, t, 0);
    const Constant* lens = t.constant_input(4, "sequence_lens");
    if (x == nullptr || x->size() != 3) {
      t.problem("sequence_lens needs X's shape [seq, batch, input] known at import");
    } else if (lens != nullptr) {
      seq = (*x)[0];
      lengths = sequence_lengths(t, *lens, seq, (*x)[1]);
    }
  }
  if (!t.problems().empty()) return;

  // Outputs Y, Y_h (, Y_c): every one named.
  const std::vector<std::string> roles =
      lstm ? std::vector<std::string>{"Y", "Y_h", "Y_c"} : std::vector<std::string>{"Y", "Y_h"};
  if (node.output_size() > static_cast<int>(roles.size())) {
    t.problem(fmt::format("has {} outputs, at most {}", node.output_size(), roles.size()));
    return;
  }
  std::string base;
  for (const std::string& o : node.output()) {
    if (!o.empty() && base.empty()) base = o;
  }
  if (base.empty()) {
    t.problem("names none of its outputs");
    return;
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (std::size_t i = 0; i < roles.size(); ++i) {
    const bool named = static_cast<int>(i) < node.output_size() && !node.output(static_cast<int>(i)).empty();
    outputs.push_back(named ? node.output(static_cast<int>(i)) : fresh_name(ctx, base + "_unused_" + roles[i]));
  }
  // Inputs in ldmsim's order: X, W, R, then B, initial_h, initial_c up to the last one given.
  nlohmann::json inputs = nlohmann::json::array({t.input(0), t.input(1), t.input(2)});
  const int last = t.has_input(lstm ? 6 : 5) ? (lstm ? 6 : 5) : t.has_input(5) ? 5 : t.has_input(3) ? 3 : 2;
  if (last >= 3) {
    if (t.has_input(3)) {
      inputs.push_back(t.input(3));
    } else {  // B left out before a given initial state: zeros
      const auto* w = known_dims(ctx, t, 1);
      if (w == nullptr || w->size() != 3) {
        t.problem("W must have a known shape [dirs, gates*hidden, input]");
        return;
      }
      Constant zeros;
      zeros.dims = {(*w)[0], 2 * (*w)[1]};
      // Built on the host: it counts against the folded constants' budget (W's shape may be anything).
      if ((*w)[0] > 2 || (*w)[1] > kMaxFoldedElements / 4) {
        t.problem(fmt::format("B is left out and W's shape [{}] would make a zero B of more than {} elements",
                              fmt::join(*w, ", "), kMaxFoldedElements / 2));
        return;
      }
      if (!t.charge_folded(zeros.dims[0] * zeros.dims[1])) return;
      zeros.values.assign(zeros.dims[0] * zeros.dims[1], 0.0);
      const std::string name = fresh_name(ctx, base + "_B");
      ctx.shapes[name] = zeros.dims;
      ctx.constants[name] = std::move(zeros);
      inputs.push_back(name);
    }
  }
  for (int i = 5; i <= last; ++i) {
    if (!t.has_input(i)) {
      t.problem(fmt::format("input {} is left out before a later one: give initial_h with initial_c", i));
      return;
    }
    inputs.push_back(t.input(i));
  }

  nlohmann::json attrs = {{"direction", direction}};
  if (a.has("hidden_size")) attrs["hidden_size"] = a.integer("hidden_size", 1);
  if (!lstm) attrs["linear_before_reset"] = a.integer("linear_before_reset", 0);
  if (!lengths.empty()) {
    translate_recurrent_by_length(t, lstm ? "lstm" : "gru", inputs, outputs.get<std::vector<std::string>>(), attrs,
                                  lengths, seq);
    return;
  }
  t.result().op = {{"type", lstm ? "lstm" : "gru"}, {"inputs", inputs}, {"outputs", outputs}, {"attrs", attrs}};
}

}  // namespace ldmsim::onnx_import
