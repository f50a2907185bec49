// Private: what translating one ONNX node uses: its attributes read with their types checked, its inputs
// resolved through aliases and constants, and the problems found (see onnx_nodes.hpp).
#pragma once

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ldmsim/kernels/recurrent.hpp"
#include "onnx_nodes.hpp"

namespace ldmsim::onnx_import {

/// A node's attributes, read with their types checked; anything not allowed, or of the wrong type, becomes a
/// problem of the translation.
class Attributes {
 public:
  using Attr = onnx::AttributeProto;

  Attributes(const onnx::NodeProto& node, std::vector<std::string>& problems, std::set<std::string> allowed)
      : problems_(problems) {
    for (const Attr& a : node.attribute()) {
      if (!allowed.contains(a.name())) {
        problems_.push_back(fmt::format("attribute '{}' is not supported", a.name()));
        continue;
      }
      by_name_[a.name()] = &a;
    }
  }

  std::int64_t integer(const std::string& name, std::int64_t fallback) const {
    const Attr* a = typed(name, Attr::INT);
    return a != nullptr ? a->i() : fallback;
  }
  float real(const std::string& name, float fallback) const {
    const Attr* a = typed(name, Attr::FLOAT);
    return a != nullptr ? a->f() : fallback;
  }
  std::string text(const std::string& name, const std::string& fallback) const {
    const Attr* a = typed(name, Attr::STRING);
    return a != nullptr ? a->s() : fallback;
  }
  std::vector<std::int64_t> integers(const std::string& name, std::vector<std::int64_t> fallback) const {
    const Attr* a = typed(name, Attr::INTS);
    return a != nullptr ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end()) : fallback;
  }
  bool has(const std::string& name) const { return by_name_.contains(name); }
  const Attr* find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

 private:
  const Attr* typed(const std::string& name, Attr::AttributeType type) const {
    const Attr* a = find(name);
    if (a == nullptr) return nullptr;
    if (a->type() != type) {
      problems_.push_back(fmt::format("attribute '{}' is {}, expected {}", name, Attr::AttributeType_Name(a->type()),
                                      Attr::AttributeType_Name(type)));
      return nullptr;
    }
    return a;
  }

  std::vector<std::string>& problems_;
  std::map<std::string, const Attr*> by_name_;
};

/// Builds one translation: the checks of a node's shape (input and output counts) and its op.
class NodeTranslator {
 public:
  NodeTranslator(const onnx::NodeProto& node, Context& ctx) : node_(node), ctx_(ctx) {}

  Translation& result() { return t_; }
  std::vector<std::string>& problems() { return t_.problems; }
  void problem(std::string text) { t_.problems.push_back(std::move(text)); }

  /// Checks that the node has [min_in, max_in] inputs and `outputs` outputs (empty trailing ones not counted).
  bool arity(int min_in, int max_in, int outputs) {
    int present = node_.input_size();
    while (present > 0 && node_.input(present - 1).empty()) --present;
    if (present < min_in || present > max_in) {
      problem(fmt::format("has {} inputs, expected {}", present,
                          min_in == max_in ? fmt::format("{}", min_in) : fmt::format("{} to {}", min_in, max_in)));
      return false;
    }
    int produced = node_.output_size();  // trailing optional outputs left unnamed are not produced
    while (produced > 0 && node_.output(produced - 1).empty()) --produced;
    if (produced != outputs) {
      problem(fmt::format("has {} outputs; only {} supported", produced, outputs));
      return false;
    }
    return true;
  }
  const onnx::NodeProto& node() const { return node_; }
  Context& context() { return ctx_; }
  std::string input(int i) const { return resolve(ctx_, node_.input(i)); }
  /// The constant value of input i, or nullptr when it is not known at import time.
  const Constant* known(int i) const {
    if (!has_input(i)) return nullptr;
    const auto it = ctx_.constants.find(input(i));
    if (it == ctx_.constants.end() || !decode(it->second)) return nullptr;
    return &it->second;
  }
  /// The constant value of input i when it has at most kEagerElements elements (a shape, a mask), else nullptr:
  /// a fold that could just as well run on the device does not decode a model's weights.
  const Constant* small_constant(int i) const {
    if (!has_input(i)) return nullptr;
    const auto it = ctx_.constants.find(input(i));
    if (it == ctx_.constants.end()) return nullptr;
    std::uint64_t count = 1;
    for (const std::uint64_t d : it->second.dims) count = d == 0 ? 0 : (count > kEagerElements ? count : count * d);
    return count <= kEagerElements ? known(i) : nullptr;
  }
  /// The node's (single) output is the constant `value`: no op runs for it.
  void define(Constant value) {
    if (value.dims.size() > kMaxConstantRank) {
      problem(fmt::format("would fold to a constant of rank {} (at most {})", value.dims.size(), kMaxConstantRank));
      return;
    }
    if (!charge_folded(value.values.size())) return;
    ctx_.shapes[node_.output(0)] = value.dims;
    ctx_.constants[node_.output(0)] = std::move(value);
  }
  /// Counts `elements` more of constants made at import against the model's budget; false (with a problem) when
  /// that exceeds it.
  bool charge_folded(std::uint64_t elements) {
    ctx_.folded_elements += elements;
    if (ctx_.folded_elements <= kMaxFoldedTotalElements) return true;
    problem(fmt::format("the model's folded constants exceed {} elements in all", kMaxFoldedTotalElements));
    return false;
  }
  bool has_input(int i) const { return node_.input_size() > i && !node_.input(i).empty(); }
  /// The known shape of input i, or nullptr with a problem naming it.
  const std::vector<std::uint64_t>* input_shape(int i) {
    const auto it = ctx_.shapes.find(input(i));
    if (it == ctx_.shapes.end()) {
      problem(fmt::format("the shape of '{}' is not known at import", node_.input(i)));
      return nullptr;
    }
    return &it->second;
  }
  /// The constant value of input i, or nullptr (with a problem naming `role`).
  /// Axis `given` of a tensor of `rank` axes made non-negative, or nullopt with the problem recorded.
  std::optional<std::size_t> axis(std::int64_t given, std::size_t rank) {
    const auto a = normalize_axis(given, rank);
    if (!a) problem(fmt::format("axis {} is outside the input's {} axes", given, rank));
    return a;
  }
  const Constant* constant_input(int i, const std::string& role) {
    const auto it = ctx_.constants.find(input(i));
    if (it == ctx_.constants.end()) {
      problem(fmt::format("input {} ('{}', the {}) must be a constant", i, node_.input(i), role));
      return nullptr;
    }
    if (!decode(it->second)) {
      problem(
          fmt::format("input {} ('{}', the {}) is a constant too large to read at import", i, node_.input(i), role));
      return nullptr;
    }
    return &it->second;
  }
  void op(const std::string& type, const std::vector<int>& inputs, nlohmann::json attrs = nlohmann::json::object()) {
    nlohmann::json names = nlohmann::json::array();
    for (const int i : inputs) names.push_back(input(i));
    t_.op = {{"type", type}, {"inputs", names}, {"attrs", std::move(attrs)}};
  }
  /// Adds one of the several ops the node becomes, in order (inputs and outputs are ONNX-level names; `outputs`
  /// are the node's own or fresh_name()s).
  void add_op(const std::string& type, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
              nlohmann::json attrs = nlohmann::json::object()) {
    if (!t_.op.is_array()) t_.op = nlohmann::json::array();
    t_.op.push_back({{"type", type}, {"inputs", inputs}, {"outputs", outputs}, {"attrs", std::move(attrs)}});
  }
  /// `value` as a constant tensor of its own under a fresh name made from `base` (its shape known); returns the name.
  std::string add_constant(const std::string& base, Constant value) {
    const std::string name = fresh_name(base);
    ctx_.shapes[name] = value.dims;
    ctx_.constants[name] = std::move(value);
    return name;
  }
  /// A tensor name that no node, input or initializer of the model uses, made from `base`.
  std::string fresh_name(const std::string& base) {
    std::string name = base;
    for (int n = 2; ctx_.reserved.contains(name); ++n) name = fmt::format("{}_{}", base, n);
    ctx_.reserved.insert(name);
    return name;
  }

 private:
  const onnx::NodeProto& node_;
  Context& ctx_;
  Translation t_;
};

/// LSTM / GRU nodes (onnx_recurrent.cpp).
void translate_recurrent(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx, CellKind kind);
/// RNN nodes, unrolled over their steps (onnx_rnn.cpp).
void translate_rnn(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx);
/// A constant sequence_lens checked against X's [seq, batch]: each batch element's length when some is shorter
/// than the sequence, or empty (all run the whole sequence, or a problem was reported).
std::vector<std::uint64_t> sequence_lengths(NodeTranslator& t, const Constant& lens, std::uint64_t seq,
                                            std::uint64_t batch);
/// A recurrent op of `type` over batch elements of different lengths: one op per run of equal lengths over its
/// first steps, Y padded with zeros to `seq`, the runs' outputs concatenated (onnx_recurrent_lengths.cpp). `inputs`
/// are in ldmsim's order (X, W, R, B, initial_h, initial_c) and `outputs` all named.
void translate_recurrent_by_length(NodeTranslator& t, const std::string& type, const nlohmann::json& inputs,
                                   const std::vector<std::string>& outputs, const nlohmann::json& attrs,
                                   const std::vector<std::uint64_t>& lengths, std::uint64_t seq);

/// Parts of a runtime tensor (onnx_views.cpp): Slice, Split, Gather with constant indices, Expand, Pad.
void translate_slice(const onnx::NodeProto& node, NodeTranslator& t);
void translate_split(const onnx::NodeProto& node, NodeTranslator& t, const Context& ctx);
void translate_gather_view(const onnx::NodeProto& node, NodeTranslator& t);
void translate_expand_view(const onnx::NodeProto& node, NodeTranslator& t);
void translate_pad(const onnx::NodeProto& node, NodeTranslator& t);

/// The spatial dims of a Conv's or pool's window: kernel_shape's length when given, else the input's rank - 2
/// (0 when neither is known).
std::size_t window_dims(const onnx::NodeProto& node, const Context& ctx);

/// 1-D Conv and pools through the 2-D engine (onnx_window_1d.cpp).
/// Whether a conv's kernel_shape (optional: empty passes) is the window of its weights `weights` (input 1, whose
/// last kernel.size() dims are the window); otherwise a problem naming both.
bool kernel_is_window(NodeTranslator& t, const std::vector<std::int64_t>& kernel,
                      const std::vector<std::uint64_t>& weights);
void translate_conv_1d(const onnx::NodeProto& node, NodeTranslator& t);
void translate_pool_1d(const onnx::NodeProto& node, NodeTranslator& t, bool max);

/// 3-D Conv and pools through the 2-D engine, the depth window unrolled into channels (onnx_window_3d.cpp).
void translate_conv_3d(const onnx::NodeProto& node, NodeTranslator& t);
void translate_pool_3d(const onnx::NodeProto& node, NodeTranslator& t, bool max);

/// InstanceNormalization as a layer_norm over each channel's spatial elements (onnx_instance_norm.cpp).
void translate_instance_norm(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx);
/// DepthToSpace (to_space) and SpaceToDepth as reshape, transpose, reshape (onnx_depth_space.cpp).
void translate_depth_space(const onnx::NodeProto& node, NodeTranslator& t, bool to_space);
/// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSumExp as point-wise ops and reductions
/// (onnx_norm_reductions.cpp).
void translate_norm_reduction(const onnx::NodeProto& node, NodeTranslator& t);
/// ReduceSum/ReduceMax/ReduceMin (`op` add, max or min) of an int32 tensor over `axes` (all when empty), and
/// ArgMax/ArgMin of one, from int32 slices and element-wise ops (onnx_integer_reductions.cpp).
void reduce_integers(NodeTranslator& t, const std::string& op, std::vector<std::size_t> axes, bool keepdims);
void arg_of_integers(NodeTranslator& t, bool max, std::size_t axis, bool keepdims, bool last);
/// Tile of a run-time tensor by constant repeats, as expands between reshapes (onnx_tile.cpp).
void translate_tile(const onnx::NodeProto& node, NodeTranslator& t);
/// Trilu: folded for a small constant, a where over a constant mask otherwise (onnx_trilu.cpp).
void translate_trilu(const onnx::NodeProto& node, NodeTranslator& t);
/// LogSoftmax as reductions and point-wise ops (onnx_log_softmax.cpp).
void translate_log_softmax(const onnx::NodeProto& node, NodeTranslator& t, const Context& ctx);

/// Einsum as transposes, reshapes, reduce_sums and matmuls (onnx_einsum.cpp).
void translate_einsum(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx);

/// ConvTranspose and Resize as convs, pads, slices and matmuls (onnx_upsampling.cpp).
void translate_conv_transpose(const onnx::NodeProto& node, NodeTranslator& t);
void translate_resize(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx);
/// Concat of `parts` along `axis` into `out`, in groups of at most 64 inputs (concat's limit) when there are more
/// (onnx_nodes.cpp).
void concat_all(NodeTranslator& t, std::vector<std::string> parts, std::int64_t axis, const std::string& out);

}  // namespace ldmsim::onnx_import
