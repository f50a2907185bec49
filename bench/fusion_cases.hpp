// The workloads of the fusion cases (issue 15), shared by bench/fusion_bench.cpp and tests/graph/fusion_test.cpp:
// decomposed LayerNorm, attention softmax, the GELU tail of an MLP, BN + residual add + ReLU, and the method's
// two examples, each as workload JSON at a size the caller picks.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ldmsim::fusion_cases {

using nlohmann::json;

inline json tensor(const std::vector<std::uint64_t>& shape, double lo, double hi, unsigned seed) {
  return {{"shape", shape}, {"init", {{"uniform", {lo, hi}}, {"seed", seed}}}};
}
inline json scalar(double v) {
  return {{"shape", json::array()}, {"init", {{"value", v}}}};
}
inline json op(const std::string& type, std::vector<std::string> in, const std::string& out, json attrs = nullptr) {
  json o = {{"type", type}, {"inputs", in}, {"outputs", {out}}};
  if (!attrs.is_null()) o["attrs"] = attrs;
  return o;
}

/// LayerNorm over hidden as ONNX exports it.
inline json layer_norm(std::uint64_t tokens, std::uint64_t hidden) {
  json w;
  w["name"] = fmt::format("layernorm_{}x{}", tokens, hidden);
  w["tensors"] = {{"x", tensor({tokens, hidden}, -2, 2, 1)},
                  {"g", tensor({hidden}, 0.5, 1.5, 2)},
                  {"b", tensor({hidden}, -0.1, 0.1, 3)},
                  {"two", scalar(2)},
                  {"eps", scalar(1e-5)}};
  w["ops"] = {op("reduce_mean", {"x"}, "m", {{"axes", {-1}}}),
              op("sub", {"x", "m"}, "d"),
              op("pow", {"d", "two"}, "d2"),
              op("reduce_mean", {"d2"}, "v", {{"axes", {-1}}}),
              op("add", {"v", "eps"}, "ve"),
              op("sqrt", {"ve"}, "s"),
              op("div", {"d", "s"}, "n"),
              op("mul", {"n", "g"}, "ng"),
              op("add", {"ng", "b"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

/// BERT-base attention probabilities: scores / sqrt(64) + mask, then softmax as max, sub, exp, sum, div.
inline json attention_softmax(std::uint64_t heads, std::uint64_t seq) {
  json w;
  w["name"] = fmt::format("attention_softmax_{}x{}x{}", heads, seq, seq);
  w["tensors"] = {{"scores", tensor({1, heads, seq, seq}, -8, 8, 1)},
                  {"mask", tensor({1, 1, 1, seq}, -1, 0, 2)},
                  {"scale", scalar(8)}};
  w["ops"] = {op("div", {"scores", "scale"}, "s"),
              op("add", {"s", "mask"}, "a"),
              op("reduce_max", {"a"}, "m", {{"axes", {-1}}}),
              op("sub", {"a", "m"}, "d"),
              op("exp", {"d"}, "e"),
              op("reduce_sum", {"e"}, "z", {{"axes", {-1}}}),
              op("div", {"e", "z"}, "p")};
  w["outputs"] = {"p"};
  return w;
}

/// A whole attention of `heads` heads as transformers export it: scores = q kt, scaled, a key mask added, softmax over
/// the keys, times v. q [heads, seq, depth], kt [heads, depth, keys], v [heads, keys, value], mask [heads, 1, keys].
inline json attention(std::uint64_t heads, std::uint64_t seq, std::uint64_t depth, std::uint64_t keys,
                      std::uint64_t value) {
  json w;
  w["name"] = fmt::format("attention_{}x{}x{}x{}x{}", heads, seq, depth, keys, value);
  w["tensors"] = {{"q", tensor({heads, seq, depth}, -1, 1, 1)},
                  {"kt", tensor({heads, depth, keys}, -1, 1, 2)},
                  {"v", tensor({heads, keys, value}, -1, 1, 3)},
                  {"mask", tensor({heads, 1, keys}, -4, 0, 4)},
                  {"scale", scalar(0.125)}};
  w["ops"] = {op("matmul", {"q", "kt"}, "scores"), op("mul", {"scores", "scale"}, "scaled"),
              op("add", {"scaled", "mask"}, "masked"), op("softmax", {"masked"}, "probs", {{"axis", -1}}),
              op("matmul", {"probs", "v"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

/// The tail of a BERT-base MLP's first layer: bias add and GELU as erf, for `tokens` tokens.
inline json gelu_tail(std::uint64_t tokens, std::uint64_t ffn) {
  json w;
  w["name"] = fmt::format("gelu_tail_{}x{}", tokens, ffn);
  w["tensors"] = {{"h", tensor({tokens, ffn}, -3, 3, 1)},
                  {"bias", tensor({ffn}, -0.1, 0.1, 2)},
                  {"sqrt2", scalar(1.4142135623730951)},
                  {"one", scalar(1)},
                  {"half", scalar(0.5)}};
  w["ops"] = {op("add", {"h", "bias"}, "x"), op("div", {"x", "sqrt2"}, "t"), op("erf", {"t"}, "e"),
              op("add", {"e", "one"}, "e1"), op("mul", {"x", "e1"}, "xe"),   op("mul", {"xe", "half"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

/// A ResNet bottleneck's end on NCHW: the last BN (inference), the residual add, ReLU.
inline json bn_add_relu(std::uint64_t n, std::uint64_t c, std::uint64_t h, std::uint64_t width) {
  json w;
  w["name"] = fmt::format("bn_add_relu_{}x{}x{}x{}", n, c, h, width);
  w["tensors"] = {{"x", tensor({n, c, h, width}, -2, 2, 1)}, {"res", tensor({n, c, h, width}, -2, 2, 2)},
                  {"scale", tensor({c}, 0.5, 1.5, 3)},       {"bias", tensor({c}, -0.2, 0.2, 4)},
                  {"mean", tensor({c}, -0.2, 0.2, 5)},       {"var", tensor({c}, 0.5, 1.5, 6)}};
  w["ops"] = {op("spatialbn", {"x", "scale", "bias", "mean", "var"}, "bn"), op("add", {"bn", "res"}, "s"),
              op("relu", {"s"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

/// The method's [5, 4, 6] min over axis 1, between element-wise ops.
inline json min_axis1() {
  json w;
  w["name"] = "method_min_5x4x6_axis1";
  w["tensors"] = {
      {"x", tensor({5, 4, 6}, -2, 2, 1)}, {"b", tensor({6}, -0.5, 0.5, 2)}, {"s", tensor({5, 1, 1}, 0.5, 1.5, 3)}};
  w["ops"] = {op("sub", {"x", "b"}, "d"), op("relu", {"d"}, "r"), op("reduce_min", {"r"}, "m", {{"axes", {1}}}),
              op("mul", {"m", "s"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

/// 4 backbones that become 2 groups with a secondary backbone each: two softmaxes (max and sum) around a matmul.
inline json four_backbones(std::uint64_t rows, std::uint64_t cols, std::uint64_t out) {
  json w;
  w["name"] = fmt::format("method_4_backbones_2_groups_{}x{}x{}", rows, cols, out);
  w["tensors"] = {{"x", tensor({rows, cols}, -3, 3, 1)}, {"w", tensor({cols, out}, -0.1, 0.1, 2)}};
  w["ops"] = {
      op("reduce_max", {"x"}, "m1", {{"axes", {-1}}}),  op("sub", {"x", "m1"}, "d1"),  op("exp", {"d1"}, "e1"),
      op("reduce_sum", {"e1"}, "s1", {{"axes", {-1}}}), op("div", {"e1", "s1"}, "p1"), op("matmul", {"p1", "w"}, "h"),
      op("reduce_max", {"h"}, "m2", {{"axes", {-1}}}),  op("sub", {"h", "m2"}, "d2"),  op("exp", {"d2"}, "e2"),
      op("reduce_sum", {"e2"}, "s2", {{"axes", {-1}}}), op("div", {"e2", "s2"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

}  // namespace ldmsim::fusion_cases
