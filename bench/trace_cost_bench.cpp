// Trace cost (issue 2): host bytes per recorded DMA event (TraceRecorder::memory_bytes() / dma_count()) and
// the time of a 4-byte get + wait with tracing on and off, plus TraceRecorder::record alone: in memory on fresh
// and on recycled pages, and spilling to a temporary file as every Machine's recorder does.
#include <malloc.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "bench_support.hpp"

namespace {

using ldmsim::Core;
using ldmsim::DevicePtr;
using ldmsim::bench::repeat;
using ldmsim::bench::run_on_group0;

/// Sum of memory_bytes() / sum of dma_count() over the groups of a machine (0 when nothing was recorded).
double bytes_per_event(const ldmsim::Machine& m) {
  std::size_t bytes = 0, events = 0;
  for (const auto* rec : m.trace()) {
    bytes += rec->memory_bytes();
    events += rec->dma_count();
  }
  return events == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(events);
}

/// get(4 bytes) + wait on one core of sw26010pro cg 0 with tracing on (trace:1) or off (trace:0).
void BM_TraceCost_GetWait4B(benchmark::State& state) {
  const bool trace = state.range(0) != 0;
  ldmsim::Machine m{ldmsim::Arch::preset("sw26010pro"), {.threads = 1, .trace = trace}};
  auto p = m.alloc<std::uint32_t>(1);
  m.upload(p, std::vector<std::uint32_t>{7u});
  const DevicePtr<const std::uint32_t> src(p);
  run_on_group0(m, 1, [&](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(1);
    repeat(state, core, [&] { core.get(buf, src).wait(); });
  });
  state.counters["calls"] = 1;
  if (trace) state.counters["bytes_per_event"] = bytes_per_event(m);
}

/// TraceRecorder::record alone, one event per iteration, the recorder cleared every 2^20 events. mode:0 (in
/// memory, fresh pages) returns the freed memory to the OS, so every page is faulted in again as in a growing
/// in-memory trace; mode:1 (in memory, recycled pages) keeps it in the heap, so only the stores are measured;
/// mode:2 spills full chunks raw to a temporary file and reuses the chunk, as a Machine's recorder does.
void BM_TraceRecord(benchmark::State& state) {
  const bool warm = state.range(0) != 0;
  mallopt(M_TRIM_THRESHOLD, warm ? (1 << 30) : (128 << 10));
  mallopt(M_MMAP_THRESHOLD, warm ? (1 << 30) : (128 << 10));
  malloc_trim(0);
  {
    ldmsim::TraceRecorder rec(0, true);
    if (state.range(0) == 2) rec.spill_to(std::filesystem::temp_directory_path());
    ldmsim::DmaEvent e;
    e.length = 4;
    e.main = 0x10'0000'0000ull;
    std::uint64_t n = 0;
    for (auto _ : state) {
      e.issue = n;
      e.start = n + 1;
      e.end = n + 100;
      rec.record(e);
      if ((++n & ((1u << 20) - 1)) == 0) rec.clear();
    }
  }
  mallopt(M_TRIM_THRESHOLD, 128 << 10);
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  malloc_trim(0);
  state.counters["calls"] = 1;
}

/// Memory of exactly one million recorded events, as the trace holds them (capacity included): spill:0 keeps
/// them in memory, spill:1 spills as a Machine does (then spill_bytes_per_event is the file's growth).
void BM_TraceMemory1M(benchmark::State& state) {
  for (auto _ : state) {
    ldmsim::TraceRecorder rec(0, true);
    if (state.range(0) == 1) rec.spill_to(std::filesystem::temp_directory_path());
    ldmsim::DmaEvent e;
    e.length = 4;
    for (std::uint64_t i = 0; i < 1'000'000; ++i) {
      e.issue = e.start = i;
      e.end = i + 100;
      rec.record(e);
    }
    state.counters["bytes_per_event"] = static_cast<double>(rec.memory_bytes()) / static_cast<double>(rec.dma_count());
    state.counters["spill_bytes_per_event"] =
        static_cast<double>(rec.spilled_bytes()) / static_cast<double>(rec.dma_count());
  }
}

}  // namespace

BENCHMARK(BM_TraceCost_GetWait4B)->ArgName("trace")->Arg(1)->Arg(0);
BENCHMARK(BM_TraceRecord)->ArgName("mode")->Arg(0)->Arg(1)->Arg(2);
BENCHMARK(BM_TraceMemory1M)->ArgName("spill")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
