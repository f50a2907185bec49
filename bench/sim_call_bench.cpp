// Cost of one simulator call (issue 2): a 4-byte get + wait, the issue and the wait apart, compute() and a
// group barrier on the 2x2 `tiny` group, next to the 4-byte copy a get performs and a bare Boost.Fiber
// switch. Each benchmark loop runs inside one kernel launch. DMA calls run on one core (no fiber switch)
// and on two (a switch per issue, as in a busy group). Divide the time by `calls` for one call.
#include <array>
#include <boost/fiber/all.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench_support.hpp"

namespace {

using ldmsim::Core;
using ldmsim::DevicePtr;
using ldmsim::bench::repeat;
using ldmsim::bench::run_on_group0;

constexpr int kBatch = 16;  ///< requests in flight per core in the batched benchmarks

/// A sw26010pro machine (bandwidth timing model) with a committed 4 KiB source region.
struct DmaSetup {
  explicit DmaSetup(bool trace) : machine(ldmsim::Arch::preset("sw26010pro"), {.threads = 1, .trace = trace}) {
    auto p = machine.alloc<std::uint32_t>(1024);
    machine.upload(p, std::vector<std::uint32_t>(1024, 7u));
    src = DevicePtr<const std::uint32_t>(p);
  }
  ldmsim::Machine machine;
  DevicePtr<const std::uint32_t> src;
};

/// The copy a 4-byte get performs (a libc memcpy of a run-time length).
void BM_Memcpy4(benchmark::State& state) {
  std::array<std::uint32_t, 16> from{}, to{};
  std::size_t bytes = 4;
  benchmark::DoNotOptimize(bytes);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.counters["calls"] = 1;
}

/// A bare Boost.Fiber yield between two fibers (default round-robin scheduler): two switches per iteration.
void BM_FiberYield(benchmark::State& state) {
  bool done = false;
  boost::fibers::fiber other([&done] {
    while (!done) boost::this_fiber::yield();
  });
  for (auto _ : state) boost::this_fiber::yield();
  done = true;
  other.join();
  state.counters["calls"] = 2;
}

/// get(4 bytes) + wait: the issue (a yield when an earlier core is ready), validation, timing, the copy, the
/// trace event and the wait. One iteration = one call on each of `cores` cores. With one core nothing is
/// ever earlier, so no fiber switch happens; with two, every issue switches to the other core.
void BM_SimCall_GetWait4B(benchmark::State& state) {
  const int cores = static_cast<int>(state.range(0));
  DmaSetup s(true);
  run_on_group0(s.machine, cores, [&](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(1);
    repeat(state, core, [&] { core.get(buf, s.src).wait(); });
  });
  state.counters["calls"] = cores;
}

/// kBatch 4-byte gets then one wait_all: the issue alone (plus 1/kBatch of a wait_all).
void BM_SimCall_Get4B_Batch(benchmark::State& state) {
  const int cores = static_cast<int>(state.range(0));
  DmaSetup s(true);
  run_on_group0(s.machine, cores, [&](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(1);
    std::array<ldmsim::DmaHandle, kBatch> handles;
    repeat(state, core, [&] {
      for (auto& h : handles) h = core.get(buf, s.src);
      core.wait_all();
    });
  });
  state.counters["calls"] = cores * kBatch;
}

/// kBatch 4-byte gets then kBatch waits in issue order: minus Get4B_Batch, the cost of a wait() on a
/// pending request with up to kBatch requests in flight.
void BM_SimCall_Get4B_BatchWaitEach(benchmark::State& state) {
  const int cores = static_cast<int>(state.range(0));
  DmaSetup s(true);
  run_on_group0(s.machine, cores, [&](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(1);
    std::array<ldmsim::DmaHandle, kBatch> handles;
    repeat(state, core, [&] {
      for (auto& h : handles) h = core.get(buf, s.src);
      for (auto& h : handles) h.wait();
    });
  });
  state.counters["calls"] = cores * kBatch;
}

/// compute() alone (charges cycles, never yields), on one core.
void BM_SimCall_Compute(benchmark::State& state) {
  ldmsim::Machine m{ldmsim::Arch::preset("tiny"), {.threads = 1}};
  run_on_group0(m, 1, [&](Core& core) { repeat(state, core, [&] { core.compute({.flops = 64, .cycles = 1}); }); });
  state.counters["calls"] = 1;
}

/// One group barrier of the four cores of `tiny` (each core's barrier() is one call).
void BM_SimCall_Barrier2x2(benchmark::State& state) {
  ldmsim::Machine m{ldmsim::Arch::preset("tiny"), {.threads = 1}};
  run_on_group0(m, 4, [&](Core& core) { repeat(state, core, [&] { core.barrier(); }); });
  state.counters["calls"] = 4;
}

}  // namespace

BENCHMARK(BM_Memcpy4);
BENCHMARK(BM_FiberYield);
BENCHMARK(BM_SimCall_GetWait4B)->ArgName("cores")->Arg(1)->Arg(2);
BENCHMARK(BM_SimCall_Get4B_Batch)->ArgName("cores")->Arg(1)->Arg(2);
BENCHMARK(BM_SimCall_Get4B_BatchWaitEach)->ArgName("cores")->Arg(1)->Arg(2);
BENCHMARK(BM_SimCall_Compute);
BENCHMARK(BM_SimCall_Barrier2x2);

BENCHMARK_MAIN();
