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

#include "fusion_cases.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/fusion.hpp"
#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;
using namespace ldmsim::fusion_cases;

namespace {

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
  const std::vector<json> cases = {layer_norm(128, 768),         layer_norm(384, 768),
                                   attention_softmax(12, 128),   gelu_tail(128, 3072),
                                   gelu_tail(384, 3072),         bn_add_relu(1, 256, 56, 56),
                                   bn_add_relu(1, 512, 28, 28),  bn_add_relu(1, 1024, 14, 14),
                                   bn_add_relu(1, 2048, 7, 7),   min_axis1(),
                                   four_backbones(256, 512, 256)};
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
