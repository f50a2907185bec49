// Host memory of an idle sw26010pro machine (issue 2): resident-set growth when the machine is constructed
// (384 cores, their local stores and fiber stacks, no main memory touched) and after one empty launch, as
// counters in MiB. Each iteration starts from a trimmed heap, so repetitions measure the same thing.
#include <malloc.h>

#include "bench_support.hpp"

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double mib_between(std::uint64_t before, std::uint64_t after) {
  return after > before ? static_cast<double>(after - before) / kMiB : 0.0;
}

void BM_IdleMachineMemory(benchmark::State& state) {
  for (auto _ : state) {
    malloc_trim(0);
    const std::uint64_t rss0 = ldmsim::bench::resident_bytes();
    const std::uint64_t vsz0 = ldmsim::bench::virtual_bytes();
    ldmsim::Machine m{ldmsim::Arch::preset("sw26010pro")};
    const std::uint64_t rss1 = ldmsim::bench::resident_bytes();
    const std::uint64_t vsz1 = ldmsim::bench::virtual_bytes();
    m.launch(ldmsim::AllGroups, [](ldmsim::Core&) {}).join();
    const std::uint64_t rss2 = ldmsim::bench::resident_bytes();
    state.counters["rss_idle_MiB"] = mib_between(rss0, rss1);
    state.counters["rss_after_launch_MiB"] = mib_between(rss0, rss2);
    state.counters["virtual_MiB"] = mib_between(vsz0, vsz1);
    state.counters["cores"] = m.arch().total_cores();
  }
}

}  // namespace

BENCHMARK(BM_IdleMachineMemory)->Iterations(1)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);  // a fixed threshold: large blocks go back to the OS when freed
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
