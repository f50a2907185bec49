// Trace tools throughput (issue 4), in events per second: recording (TraceRecorder::record, spilling to a temporary
// file as a Machine does, and in memory for comparison), writing the trace file from the spilled recorder
// (TraceWriter::write_group), reading it (TraceReader::next), summarizing and exporting it (chrome JSON and CSV to a
// discarding stream); plus bytes per event on disk and each step's peak resident memory (VmHWM after resetting it).
// Events are synthetic but shaped like a contended run: 64 cores streaming tiles of mixed sizes, random queueing
// delays and durations, 1 in 8 strided. Argument: events per run (1 Mi and 10 M).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <span>
#include <streambuf>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"
#include "ldmsim/trace_analysis/export.hpp"
#include "ldmsim/trace_analysis/summary.hpp"

namespace {

using ldmsim::bench::peak_rss_mib;
using ldmsim::bench::reset_peak_rss;

/// A stream buffer that drops everything (export cost without disk cost).
class NullBuf : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
};

/// splitmix64: cheap, deterministic pseudo-random bits.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Event i of a run where 64 cores each stream through their own 16 MiB region.
class Synthetic {
 public:
  ldmsim::DmaEvent next() {
    const std::uint64_t r = mix(i_++);
    ldmsim::DmaEvent e;
    e.core = static_cast<std::uint16_t>(r % 64);
    e.op = (r >> 8) % 3 == 2 ? ldmsim::DmaOp::kPut : ldmsim::DmaOp::kGet;
    e.length = 256u << ((r >> 12) % 6);
    issue_ += 1 + (r >> 16) % 24;
    e.issue = issue_;
    e.start = e.issue + 10 + (r >> 24) % 1500;
    e.end = e.start + e.length / 2 + 300 + (r >> 36) % 64;
    auto& cursor = cursor_[e.core];
    e.main = 0x100000000ull + std::uint64_t{e.core} * (16u << 20) + cursor;
    cursor = (cursor + e.length) % (16u << 20);
    e.ldm = static_cast<std::uint32_t>((r >> 44) % 4 * 8192);
    if ((r >> 50) % 8 == 0) {
      e.bsize = e.length / 4;
      e.stride = 4 * e.bsize;
    }
    return e;
  }

 private:
  std::uint64_t i_ = 0;
  std::uint64_t issue_ = 0;
  std::array<std::uint64_t, 64> cursor_{};
};

std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("ldmsim-trace-tools-bench-" + std::to_string(getpid()) + name);
}

nlohmann::json header(std::uint64_t n) {
  return {
      {"arch",
       {{"name", "bench"}, {"clock_hz", 1e9}, {"core_groups", {{"count", 1}, {"cores", {{"rows", 8}, {"cols", 8}}}}}}},
      {"cycles", n * 14 + 5000},
      {"fault", nullptr}};
}

void rates(benchmark::State& state, std::uint64_t n) {
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_rss_mib"] = peak_rss_mib();
}

/// A spilling recorder holding n events (built once per n and kept for the write benchmark).
const ldmsim::TraceRecorder& recorded(std::uint64_t n) {
  static std::map<std::uint64_t, std::unique_ptr<ldmsim::TraceRecorder>> cache;
  auto& slot = cache[n];
  if (!slot) {
    cache.clear();  // one at a time: keep the spill files (and page cache) of one size only
    auto rec = std::make_unique<ldmsim::TraceRecorder>(0, true);
    rec->spill_to(std::filesystem::temp_directory_path());
    Synthetic events;
    for (std::uint64_t i = 0; i < n; ++i) rec->record(events.next());
    cache[n] = std::move(rec);
  }
  return *cache[n];
}

/// The trace file of n events (written from recorded(n)).
std::filesystem::path trace_file(std::uint64_t n) {
  const auto path = scratch("-" + std::to_string(n) + ".ldmtrace");
  if (!std::filesystem::exists(path)) {
    const ldmsim::TraceRecorder* group = &recorded(n);
    ldmsim::write_trace(path, header(n), std::span<const ldmsim::TraceRecorder* const>(&group, 1));
  }
  return path;
}

/// Records n synthetic events; they are generated in batches with the timer paused, so the rate is the
/// recorder's alone.
void record_untimed_events(benchmark::State& state, ldmsim::TraceRecorder& rec, std::uint64_t n) {
  state.PauseTiming();
  Synthetic events;
  std::vector<ldmsim::DmaEvent> batch(4096);
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t k = std::min<std::uint64_t>(batch.size(), n - done);
    for (std::uint64_t j = 0; j < k; ++j) batch[j] = events.next();
    state.ResumeTiming();
    for (std::uint64_t j = 0; j < k; ++j) rec.record(batch[j]);
    state.PauseTiming();
    done += k;
  }
  state.ResumeTiming();
  benchmark::DoNotOptimize(rec.dma_count());
}

void BM_RecordSpilling(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  reset_peak_rss();
  std::uint64_t spilled = 0;
  for (auto _ : state) {
    ldmsim::TraceRecorder rec(0, true);
    rec.spill_to(std::filesystem::temp_directory_path());
    record_untimed_events(state, rec, n);
    spilled = rec.spilled_bytes();
  }
  rates(state, n);
  state.counters["spill_bytes_per_event"] = static_cast<double>(spilled) / static_cast<double>(n);
}

void BM_RecordInMemory(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  reset_peak_rss();
  for (auto _ : state) {
    ldmsim::TraceRecorder rec(0, true);
    record_untimed_events(state, rec, n);
  }
  rates(state, n);
}

void BM_Write(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const ldmsim::TraceRecorder* group = &recorded(n);
  const auto path = scratch("-write.ldmtrace");
  reset_peak_rss();
  for (auto _ : state) {
    ldmsim::write_trace(path, header(n), std::span<const ldmsim::TraceRecorder* const>(&group, 1));
  }
  rates(state, n);
  state.counters["bytes_per_event"] = static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(n);
  std::filesystem::remove(path);
}

void BM_Read(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const auto path = trace_file(n);
  reset_peak_rss();
  for (auto _ : state) {
    ldmsim::TraceReader r(path);
    ldmsim::TraceBlock block;
    std::uint64_t sum = 0;
    while (r.next(block))
      for (std::size_t i = 0; i < block.chunk.size(); ++i) sum += block.chunk.at(i).length;
    benchmark::DoNotOptimize(sum);
  }
  rates(state, n);
}

void BM_Summary(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const auto path = trace_file(n);
  reset_peak_rss();
  for (auto _ : state) benchmark::DoNotOptimize(ldmsim::summarize_trace(path).requests());
  rates(state, n);
}

/// One exporter (chrome JSON or CSV) over the n-event file, to a discarding stream.
using Exporter = ldmsim::ExportCounts (*)(const std::filesystem::path&, std::ostream&);
void BM_Export(benchmark::State& state, Exporter exporter) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const auto path = trace_file(n);
  NullBuf buf;
  std::ostream out(&buf);
  reset_peak_rss();
  for (auto _ : state) benchmark::DoNotOptimize(exporter(path, out).requests);
  rates(state, n);
}

ldmsim::ExportCounts export_chrome(const std::filesystem::path& trace, std::ostream& out) {
  return ldmsim::export_chrome_json(trace, out);
}

constexpr std::int64_t kSmall = 1 << 20;
constexpr std::int64_t kLarge = 10'000'000;

void sizes(benchmark::internal::Benchmark* b) {
  b->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_RecordSpilling)->Apply(sizes);
BENCHMARK(BM_RecordInMemory)->Apply(sizes);
BENCHMARK(BM_Write)->Apply(sizes);
BENCHMARK(BM_Read)->Apply(sizes);
BENCHMARK(BM_Summary)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Export, chrome, export_chrome)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Export, csv, ldmsim::export_csv)->Apply(sizes);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove(scratch("-" + std::to_string(kSmall) + ".ldmtrace"), ec);
  std::filesystem::remove(scratch("-" + std::to_string(kLarge) + ".ldmtrace"), ec);
  return 0;
}
