// Fusion off vs on, side by side in one run (docs/benchmarks.md "Fusion of memory-intensive subgraphs"): for each
// case of the issue (decomposed LayerNorm, attention softmax, the GELU tail of a BERT-base MLP, ResNet-50's
// BN + residual add + ReLU, the method's two examples) the kernels launched, DMA bytes and simulated cycles of
// both runs, host time (median of --reps), the fused outputs' largest difference from the unfused ones, and the
// geometric mean of the simulated speedups. Prints a markdown table.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/fusion.hpp"
#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

json tensor(const std::vector<std::uint64_t>& shape, double lo, double hi, unsigned seed) {
  return {{"shape", shape}, {"init", {{"uniform", {lo, hi}}, {"seed", seed}}}};
}
json scalar(double v) {
  return {{"shape", json::array()}, {"init", {{"value", v}}}};
}
json op(const std::string& type, std::vector<std::string> in, const std::string& out, json attrs = nullptr) {
  json o = {{"type", type}, {"inputs", in}, {"outputs", {out}}};
  if (!attrs.is_null()) o["attrs"] = attrs;
  return o;
}

/// LayerNorm over hidden as ONNX exports it.
json layer_norm(std::uint64_t tokens, std::uint64_t hidden) {
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
json attention_softmax() {
  json w;
  w["name"] = "attention_softmax_12x128x128";
  w["tensors"] = {{"scores", tensor({1, 12, 128, 128}, -8, 8, 1)},
                  {"mask", tensor({1, 1, 1, 128}, -1, 0, 2)},
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

/// The tail of a BERT-base MLP's first layer: bias add and GELU as erf, for `tokens` tokens.
json gelu_tail(std::uint64_t tokens) {
  json w;
  w["name"] = fmt::format("gelu_tail_{}x3072", tokens);
  w["tensors"] = {{"h", tensor({tokens, 3072}, -3, 3, 1)},
                  {"bias", tensor({3072}, -0.1, 0.1, 2)},
                  {"sqrt2", scalar(1.4142135623730951)},
                  {"one", scalar(1)},
                  {"half", scalar(0.5)}};
  w["ops"] = {op("add", {"h", "bias"}, "x"), op("div", {"x", "sqrt2"}, "t"), op("erf", {"t"}, "e"),
              op("add", {"e", "one"}, "e1"), op("mul", {"x", "e1"}, "xe"),   op("mul", {"xe", "half"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

/// A ResNet-50 bottleneck's end: the last BN, the residual add, ReLU.
json bn_add_relu(std::uint64_t c, std::uint64_t hw) {
  json w;
  w["name"] = fmt::format("resnet50_bn_add_relu_{}x{}x{}", c, hw, hw);
  w["tensors"] = {{"x", tensor({1, c, hw, hw}, -2, 2, 1)}, {"res", tensor({1, c, hw, hw}, -2, 2, 2)},
                  {"scale", tensor({c}, 0.5, 1.5, 3)},     {"bias", tensor({c}, -0.2, 0.2, 4)},
                  {"mean", tensor({c}, -0.2, 0.2, 5)},     {"var", tensor({c}, 0.5, 1.5, 6)}};
  w["ops"] = {op("spatialbn", {"x", "scale", "bias", "mean", "var"}, "bn"), op("add", {"bn", "res"}, "s"),
              op("relu", {"s"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

/// The method's [5, 4, 6] min over axis 1, between element-wise ops.
json min_axis1() {
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
json four_backbones() {
  json w;
  w["name"] = "method_4_backbones_2_groups";
  w["tensors"] = {{"x", tensor({256, 512}, -3, 3, 1)}, {"w", tensor({512, 256}, -0.1, 0.1, 2)}};
  w["ops"] = {
      op("reduce_max", {"x"}, "m1", {{"axes", {-1}}}),  op("sub", {"x", "m1"}, "d1"),  op("exp", {"d1"}, "e1"),
      op("reduce_sum", {"e1"}, "s1", {{"axes", {-1}}}), op("div", {"e1", "s1"}, "p1"), op("matmul", {"p1", "w"}, "h"),
      op("reduce_max", {"h"}, "m2", {{"axes", {-1}}}),  op("sub", {"h", "m2"}, "d2"),  op("exp", {"d2"}, "e2"),
      op("reduce_sum", {"e2"}, "s2", {{"axes", {-1}}}), op("div", {"e2", "s2"}, "y")};
  w["outputs"] = {"y"};
  return w;
}

struct Measured {
  std::uint64_t kernels = 0, dma_bytes = 0, cycles = 0;
  double host_ms = 0;
  ExecutionResult result;
};

Measured measure(const Graph& g, const Arch& arch, int reps) {
  Measured m;
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    Machine machine(arch);
    const auto t0 = std::chrono::steady_clock::now();
    m.result = execute(g, machine);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  m.host_ms = times[times.size() / 2];
  m.kernels = m.result.stats["ops"].size() + m.result.stats["relayouts"].size();
  m.dma_bytes = m.result.stats["dma_bytes"].get<std::uint64_t>();
  m.cycles = m.result.stats["cycles"].get<std::uint64_t>();
  return m;
}

double largest_difference(const ExecutionResult& a, const ExecutionResult& b) {
  double worst = 0;
  for (const auto& [name, values] : a.outputs) {
    const auto& other = b.outputs.at(name);
    for (std::size_t i = 0; i < values.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(static_cast<float>(values[i])) -
                                       static_cast<double>(static_cast<float>(other[i]))));
    }
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::string arch_name = "sw26010pro";
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--arch" && i + 1 < argc) {
      arch_name = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      fmt::print(stderr, "usage: fusion_bench [--arch NAME] [--reps N]\n");
      return 2;
    }
  }
  const Arch arch = Arch::resolve(arch_name);
  const OperatorRegistry registry = OperatorRegistry::builtin();
  const std::vector<json> cases = {layer_norm(128, 768), layer_norm(384, 768),  attention_softmax(),
                                   gelu_tail(128),       gelu_tail(384),        bn_add_relu(256, 56),
                                   bn_add_relu(512, 28), bn_add_relu(1024, 14), bn_add_relu(2048, 7),
                                   min_axis1(),          four_backbones()};
  fmt::print("fusion off vs on on {}, host time median of {} runs\n\n", arch.name, reps);
  fmt::print(
      "| case | kernels off / on | DMA bytes off / on | cycles off / on | speedup | host ms off / on | max diff |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  double log_sum = 0;
  for (const json& w : cases) {
    const Graph g = workload_from_json(w, "fusion_bench", ".", registry);
    const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
    const Measured off = measure(g, arch, reps), on = measure(f.graph, arch, reps);
    const double speedup = static_cast<double>(off.cycles) / static_cast<double>(on.cycles);
    log_sum += std::log(speedup);
    fmt::print("| {} | {} / {} | {} / {} | {} / {} | {:.2f}x | {:.1f} / {:.1f} | {:.3g} |\n", g.name, off.kernels,
               on.kernels, off.dma_bytes, on.dma_bytes, off.cycles, on.cycles, speedup, off.host_ms, on.host_ms,
               largest_difference(off.result, on.result));
  }
  fmt::print("\ngeometric-mean simulated speedup: {:.2f}x over {} cases\n",
             std::exp(log_sum / static_cast<double>(cases.size())), cases.size());
  return 0;
}
