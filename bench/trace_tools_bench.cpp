// Trace tools throughput (issue 4): events per second for recording (TraceRecorder::record), writing a trace
// streamed chunk by chunk (TraceWriter::write_dma), reading it (TraceReader::next), summarizing and exporting it
// (chrome JSON and CSV to a discarding stream), plus bytes per event on disk and the process's peak RSS.
// Argument: events per run (default set 1 Mi; pass --benchmark_filter and the 10 Mi variants for the big case).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string>

#include "ldmsim/dma/trace_export.hpp"
#include "ldmsim/dma/trace_file.hpp"
#include "ldmsim/dma/trace_recorder.hpp"
#include "ldmsim/dma/trace_summary.hpp"

namespace {

/// A stream buffer that drops everything (export cost without disk cost).
class NullBuf : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
};

/// A plausible event: 64 cores issuing gets and puts of 256 B..8 KiB, a few in flight per core.
ldmsim::DmaEvent synthetic(std::uint64_t i) {
  ldmsim::DmaEvent e;
  e.core = static_cast<std::uint16_t>(i % 64);
  e.op = (i / 64) % 3 == 2 ? ldmsim::DmaOp::kPut : ldmsim::DmaOp::kGet;
  e.length = 256u << ((i / 64) % 6);
  e.issue = i * 8;
  e.start = e.issue + (i % 7);
  e.end = e.start + e.length / 32 + 100;
  e.main = 0x10000000 + (i * 4096) % (std::uint64_t{1} << 30);
  e.ldm = static_cast<std::uint32_t>((i * 256) % 65536);
  return e;
}

std::filesystem::path trace_path(std::uint64_t n) {
  return std::filesystem::temp_directory_path() /
         ("ldmsim-trace-tools-bench-" + std::to_string(getpid()) + "-" + std::to_string(n) + ".ldmtrace");
}

nlohmann::json header(std::uint64_t n) {
  return {
      {"arch",
       {{"name", "bench"}, {"clock_hz", 1e9}, {"core_groups", {{"count", 1}, {"cores", {{"rows", 8}, {"cols", 8}}}}}}},
      {"cycles", n * 8 + 1000},
      {"fault", nullptr}};
}

/// Writes an n-event trace one chunk at a time (bounded memory) unless it exists.
const std::filesystem::path& ensure_trace(std::uint64_t n) {
  static std::filesystem::path path;
  if (path == trace_path(n) && std::filesystem::exists(path)) return path;
  path = trace_path(n);
  ldmsim::TraceWriter w(path, header(n));
  ldmsim::DmaChunk chunk;
  for (std::uint64_t i = 0; i < n; ++i) {
    chunk.push(synthetic(i));
    if (chunk.full() || i + 1 == n) {
      w.write_dma(0, chunk);
      chunk = ldmsim::DmaChunk{};
    }
  }
  w.write_markers(0, {});
  w.finish();
  return path;
}

void rates(benchmark::State& state, std::uint64_t n) {
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  state.counters["peak_rss_mb"] = static_cast<double>(u.ru_maxrss) / 1024.0;
}

void BM_Record(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  for (auto _ : state) {
    ldmsim::TraceRecorder rec(0, true);
    for (std::uint64_t i = 0; i < n; ++i) rec.record(synthetic(i));
    benchmark::DoNotOptimize(rec.dma_count());
  }
  rates(state, n);
}

void BM_Write(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const auto path = trace_path(n).string() + ".w";
  for (auto _ : state) {
    ldmsim::TraceWriter w(path, header(n));
    ldmsim::DmaChunk chunk;
    for (std::uint64_t i = 0; i < n; ++i) {
      chunk.push(synthetic(i));
      if (chunk.full() || i + 1 == n) {
        w.write_dma(0, chunk);
        chunk = ldmsim::DmaChunk{};
      }
    }
    w.write_markers(0, {});
    w.finish();
  }
  rates(state, n);
  state.counters["bytes_per_event"] = static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(n);
  std::filesystem::remove(path);
}

void BM_Read(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const auto& path = ensure_trace(n);
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
  const auto& path = ensure_trace(n);
  for (auto _ : state) benchmark::DoNotOptimize(ldmsim::summarize_trace(path).requests());
  rates(state, n);
}

void BM_ExportChrome(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const auto& path = ensure_trace(n);
  NullBuf buf;
  std::ostream out(&buf);
  for (auto _ : state) benchmark::DoNotOptimize(ldmsim::export_chrome_json(path, out).requests);
  rates(state, n);
}

void BM_ExportCsv(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const auto& path = ensure_trace(n);
  NullBuf buf;
  std::ostream out(&buf);
  for (auto _ : state) benchmark::DoNotOptimize(ldmsim::export_csv(path, out).requests);
  rates(state, n);
}

constexpr std::int64_t kSmall = 1 << 20;
constexpr std::int64_t kLarge = 10'000'000;

}  // namespace

BENCHMARK(BM_Record)->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Write)->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Read)->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Summary)->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ExportChrome)->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ExportCsv)->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMillisecond)->Iterations(1);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove(trace_path(kSmall), ec);
  std::filesystem::remove(trace_path(kLarge), ec);
  return 0;
}
