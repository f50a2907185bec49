// Helpers shared by the benchmark programs: run a Google Benchmark loop inside one kernel launch (so the
// launch stays outside the timed region) and read the process's resident memory.
#pragma once

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "ldmsim/ldmsim.hpp"

namespace ldmsim::bench {

/// Runs f() once per benchmark iteration on this core. Core 0 drives the benchmark's timed loop; the other
/// cores run the same number of iterations (state.max_iterations), so every core makes the same calls.
/// The timer runs on the launch's host thread, so CPU time is that thread's time.
template <typename F>
void repeat(benchmark::State& state, const Core& core, F&& f) {
  if (core.id() == 0) {
    for (auto _ : state) f();
  } else {
    for (benchmark::IterationCount i = 0; i < state.max_iterations; ++i) f();
  }
}

/// Launches body(core) on cores [0, cores) of core group 0 (the group's other cores return at once) and
/// joins. The heap is trimmed first, so a growing trace lands on fresh pages as in one long run, whatever
/// earlier benchmarks of the process freed.
template <typename Body>
void run_on_group0(Machine& machine, int cores, Body body) {
  malloc_trim(0);
  machine
      .launch(LaunchSpec{.groups = {0}, .name = "bench"},
              [&body, cores](Core& core) {
                if (core.id() < cores) body(core);
              })
      .join();
}

/// Resident set size of this process in bytes (/proc/self/statm), 0 if unavailable.
inline std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

/// Virtual size of this process in bytes (/proc/self/statm), 0 if unavailable.
inline std::uint64_t virtual_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0;
  if (!(statm >> size_pages)) return 0;
  return size_pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

/// Resets this process's peak-RSS mark (Linux >= 4.0), so peak_rss_mib() then reports one step's peak.
inline void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

/// Peak resident memory since the last reset_peak_rss() (VmHWM), in MiB; 0 if unavailable.
inline double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      double kib = 0;
      status >> kib;
      return kib / 1024.0;
    }
    status.ignore(1 << 12, '\n');
  }
  return 0;
}

}  // namespace ldmsim::bench
