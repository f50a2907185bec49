// Launch + join of an empty kernel on all 384 cores of sw26010pro (issue 2), with one and two host threads.
// Wall-clock time: the work happens on the launch's host threads; the CPU column is the whole process.
#include "bench_support.hpp"

namespace {

void BM_LaunchJoinEmpty(benchmark::State& state) {
  ldmsim::Machine m{ldmsim::Arch::preset("sw26010pro"), {.threads = static_cast<unsigned>(state.range(0))}};
  for (auto _ : state) m.launch(ldmsim::AllGroups, [](ldmsim::Core&) {}).join();
  state.counters["cores"] = m.arch().total_cores();
}

}  // namespace

BENCHMARK(BM_LaunchJoinEmpty)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
