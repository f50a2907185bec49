// ONNX LSTM and GRU nodes whose sequence_lens, a constant, gives some batch elements fewer steps than the sequence
// (docs/onnx.md). ldmsim's recurrent ops run whole sequences, so the node becomes one op per run of consecutive
// batch elements of equal length, each over its own first L steps: a forward pass stops at step L - 1 and a
// reverse pass starts there, exactly ONNX's meaning. Y is zero past each element's length (a constant pad), Y_h and
// Y_c hold the state after its last valid step; the runs' outputs are concatenated back along the batch axis.
#include <fmt/format.h>

#include <cmath>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {

std::vector<std::uint64_t> sequence_lengths(NodeTranslator& t, const Constant& lens, std::uint64_t seq,
                                            std::uint64_t batch) {
  if (lens.values.size() != batch) {
    t.problem(
        fmt::format("sequence_lens has {} entries, expected one per batch element ({})", lens.values.size(), batch));
    return {};
  }
  std::vector<std::uint64_t> lengths;
  bool shorter = false;
  for (std::size_t b = 0; b < lens.values.size(); ++b) {
    const double v = lens.values[b];
    if (!(v >= 1 && v <= static_cast<double>(seq)) || std::floor(v) != v) {
      t.problem(fmt::format("sequence_lens holds {} for batch element {}: lengths must be 1 to the sequence length {}",
                            v, b, seq));
      return {};
    }
    lengths.push_back(static_cast<std::uint64_t>(v));
    shorter = shorter || lengths.back() < seq;
  }
  if (!shorter) return {};  // every element runs the whole sequence: one op as usual
  return lengths;
}

void translate_recurrent_by_length(NodeTranslator& t, const std::string& type, const nlohmann::json& inputs,
                                   const std::vector<std::string>& outputs, const nlohmann::json& attrs,
                                   const std::vector<std::uint64_t>& lengths, std::uint64_t seq) {
  const std::string x = inputs[0].get<std::string>();
  const auto batch = static_cast<std::int64_t>(lengths.size());
  // Runs of consecutive batch elements with one length: [begin, end).
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  for (std::int64_t b = 0; b < batch; ++b) {
    if (runs.empty() || lengths[static_cast<std::size_t>(b)] != lengths[static_cast<std::size_t>(runs.back().first)]) {
      runs.emplace_back(b, b + 1);
    } else {
      runs.back().second = b + 1;
    }
  }
  const bool one_run = runs.size() == 1;
  std::vector<std::vector<std::string>> pieces(outputs.size());  // per output, per run
  for (const auto& [begin, end] : runs) {
    const auto steps = static_cast<std::int64_t>(lengths[static_cast<std::size_t>(begin)]);
    const std::string tag = fmt::format("/len{}_batch{}", steps, begin);
    nlohmann::json run_inputs = inputs;
    const std::string xr = t.fresh_name(x + tag);
    t.add_op("slice", {x}, {xr}, {{"starts", {0, begin}}, {"ends", {steps, end}}, {"axes", {0, 1}}});
    run_inputs[0] = xr;
    for (std::size_t i = 4; i < inputs.size(); ++i) {  // initial_h, initial_c: [dirs, batch, hidden]
      const std::string state = inputs[i].get<std::string>();
      const std::string sr = t.fresh_name(state + tag);
      t.add_op("slice", {state}, {sr}, {{"starts", {begin}}, {"ends", {end}}, {"axes", {1}}});
      run_inputs[i] = sr;
    }
    std::vector<std::string> run_outputs;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      // With one run, the states are the node's own outputs; Y still needs its pad.
      run_outputs.push_back(one_run && o > 0 ? outputs[o] : t.fresh_name(outputs[o] + tag));
    }
    t.add_op(type, run_inputs.get<std::vector<std::string>>(), run_outputs, attrs);
    // Y [steps, dirs, batch, hidden]: zeros for the steps past this run's length.
    const std::string padded = one_run ? outputs[0] : t.fresh_name(outputs[0] + tag + "/padded");
    t.add_op("pad", {run_outputs[0]}, {padded},
             {{"pads", {0, 0, 0, 0, static_cast<std::int64_t>(seq) - steps, 0, 0, 0}}, {"mode", "constant"}});
    pieces[0].push_back(padded);
    for (std::size_t o = 1; o < outputs.size(); ++o) pieces[o].push_back(run_outputs[o]);
  }
  if (one_run) return;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    t.add_op("concat", pieces[o], {outputs[o]}, {{"axis", o == 0 ? 2 : 1}});
  }
}

}  // namespace ldmsim::onnx_import
