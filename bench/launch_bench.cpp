// Launch + join of an empty kernel on all 384 cores of sw26010pro, with one and two host threads: from the caller's
// thread, and from the control core on the machine's first launch thread (Machine::run_control, as `execute` runs),
// there with a trace (the machine's default) and without (`--no-trace`: no launch and core-exit markers).
// Wall-clock time: the work happens on the launch's host threads; the CPU column is the whole process.
#include "bench_support.hpp"

namespace {

void BM_LaunchJoinEmpty(benchmark::State& state) {
  ldmsim::Machine m{ldmsim::Arch::preset("sw26010pro"), {.threads = static_cast<unsigned>(state.range(0))}};
  for (auto _ : state) m.launch(ldmsim::AllGroups, [](ldmsim::Core&) {}).join();
  state.counters["cores"] = m.arch().total_cores();
}

void launch_as_control(benchmark::State& state, bool trace) {
  ldmsim::Machine m{ldmsim::Arch::preset("sw26010pro"),
                    {.threads = static_cast<unsigned>(state.range(0)), .trace = trace}};
  m.run_control([&] {
    for (auto _ : state) m.launch(ldmsim::AllGroups, [](ldmsim::Core&) {}).join();
  });
  state.counters["cores"] = m.arch().total_cores();
}

void BM_LaunchJoinEmptyAsControl(benchmark::State& state) {
  launch_as_control(state, true);
}

void BM_LaunchJoinEmptyAsControlNoTrace(benchmark::State& state) {
  launch_as_control(state, false);
}

}  // namespace

/// One and two host threads; wall-clock time, with the whole process's CPU time beside it.
void per_thread_count(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_LaunchJoinEmpty)->Apply(per_thread_count);
BENCHMARK(BM_LaunchJoinEmptyAsControl)->Apply(per_thread_count);
BENCHMARK(BM_LaunchJoinEmptyAsControlNoTrace)->Apply(per_thread_count);

BENCHMARK_MAIN();
