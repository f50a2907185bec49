// multiply_add, the host arithmetic of every simulated matmul and conv tile, on the block shapes real networks give
// it (rows x columns x depth of one core's chunk): the host's own path (128-column blocks for one or two rows on
// AVX-512 hosts) beside the portable path every other host runs and the unfused one of a host without FMA.
// Counters: GFLOP/s of the products and sums.
#include <random>
#include <vector>

#include "../kernels/src/ops/tile_floats.hpp"
#include "../kernels/src/ops/tile_math.hpp"  // white box: the kernel's entry points
#include "bench_support.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace {

using MultiplyAdd = void (*)(const float*, const float*, float*, std::size_t, std::size_t, std::size_t, std::size_t,
                             std::size_t);

void run_shape(benchmark::State& state, MultiplyAdd multiply) {
  const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
  const auto depth = static_cast<std::size_t>(state.range(2));
  const std::size_t pitch = ldmsim::ops::b_pitch_for(cols);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1.0F, 1.0F);
  ldmsim::ops::TileFloats a(rows * depth), b(depth * pitch), acc(rows * cols, 0.0F);  // as the kernels hold them
  for (float& x : a) x = static_cast<float>(ldmsim::f16(value(rng)));  // fp16 values, as its operands are
  for (float& x : b) x = static_cast<float>(ldmsim::f16(value(rng)));
  for (auto _ : state) {
    multiply(a.data(), b.data(), acc.data(), rows, cols, depth, cols, pitch);
    benchmark::DoNotOptimize(acc.data());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * static_cast<double>(rows * cols * depth);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_MultiplyAdd(benchmark::State& state) {
  run_shape(state, ldmsim::ops::multiply_add);
}

void BM_MultiplyAddPortable(benchmark::State& state) {
  run_shape(state, ldmsim::ops::multiply_add_portable);
}

void BM_MultiplyAddUnfused(benchmark::State& state) {
  run_shape(state, ldmsim::ops::multiply_add_unfused);
}

/// A group team's two rows by a projection's B tile (ViT-B/16, the BERT-base layer), four rows of a conv or an MLP
/// block, an attention's three query rows by its keys (Q Kt) and by V (P V), and a group team's 64 members' rows
/// multiplied together (kernels/src/ops/product_queue.hpp), and the commonest chunks of ResNet-50's convolutions
/// (narrow tiles of 28 to 196 output columns).
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "cols", "depth"});
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{2, 128, 256},
                                                                  {2, 256, 128},
                                                                  {1, 256, 128},
                                                                  {4, 256, 128},
                                                                  {4, 64, 256},
                                                                  {3, 197, 64},
                                                                  {3, 64, 197},
                                                                  {128, 128, 256},
                                                                  {128, 256, 128},
                                                                  {16, 28, 256},
                                                                  {11, 196, 128},
                                                                  {11, 42, 256},
                                                                  {8, 49, 256}}) {
    b->Args(shape);
  }
}

}  // namespace

BENCHMARK(BM_MultiplyAdd)->Apply(shapes);
BENCHMARK(BM_MultiplyAddPortable)->Apply(shapes);
BENCHMARK(BM_MultiplyAddUnfused)->Apply(shapes);

BENCHMARK_MAIN();
