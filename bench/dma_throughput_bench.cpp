// DMA throughput through the full path (issue 2): contiguous gets of 64 B, 1 KiB and 16 KiB (validation,
// bandwidth timing model, copy, trace on or off, wait) next to plain memcpy of the same bytes from one
// host buffer into another; bytes_per_second compares the two directly. The gets run on one core of a
// sw26010pro group (no fiber switch) and on two (every issue switches to the other core).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "bench_support.hpp"

namespace {

using ldmsim::Core;
using ldmsim::DevicePtr;
using ldmsim::bench::repeat;
using ldmsim::bench::run_on_group0;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using HostBuffer = std::unique_ptr<std::byte, FreeDeleter>;

HostBuffer page_aligned(std::size_t bytes) {
  return HostBuffer(static_cast<std::byte*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)));
}

/// memcpy of `bytes` from one page-aligned buffer into another (like a committed main-memory chunk and a
/// local store).
void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  HostBuffer src = page_aligned(bytes);
  HostBuffer dst = page_aligned(bytes);
  std::memset(src.get(), 7, bytes);
  std::memset(dst.get(), 0, bytes);
  for (auto _ : state) {
    std::memcpy(dst.get(), src.get(), bytes);
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.counters["calls"] = 1;
}

/// get(bytes) + wait on each of `cores` cores of cg 0 of sw26010pro, tracing on (trace:1) or off (trace:0).
void BM_DmaGet(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const bool trace = state.range(1) != 0;
  const int cores = static_cast<int>(state.range(2));
  ldmsim::Machine m{ldmsim::Arch::preset("sw26010pro"), {.threads = 1, .trace = trace}};
  auto p = m.alloc<std::uint32_t>(bytes / 4);
  m.upload(p, std::vector<std::uint32_t>(bytes / 4, 7u));
  const DevicePtr<const std::uint32_t> src(p);
  run_on_group0(m, cores, [&](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(bytes / 4);
    repeat(state, core, [&] { core.get(buf, src).wait(); });
  });
  state.SetBytesProcessed(state.iterations() * cores * state.range(0));
  state.counters["calls"] = cores;
}

}  // namespace

BENCHMARK(BM_Memcpy)->ArgName("bytes")->Arg(64)->Arg(1024)->Arg(16384);
BENCHMARK(BM_DmaGet)->ArgNames({"bytes", "trace", "cores"})->ArgsProduct({{64, 1024, 16384}, {1, 0}, {1, 2}});

BENCHMARK_MAIN();
