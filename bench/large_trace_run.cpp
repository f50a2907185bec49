// A simulated run with millions of DMA requests (issue 4, "large traces"): every core of every group streams tiles
// of mixed sizes through its local store (get, compute, put), recording the whole trace, which is then written.
// Prints one JSON object: requests, simulation and write wall time, events per second, trace bytes per event and the
// peak resident memory of each step, so scripts/large_trace.sh can show that memory stays flat as the run grows.
//
// Usage: large_trace_run [--requests N] [--arch NAME] [--threads T] [--out FILE]
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "bench_support.hpp"
#include "ldmsim/ldmsim.hpp"

namespace {

using ldmsim::bench::peak_rss_mib;
using ldmsim::bench::reset_peak_rss;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Args {
  std::uint64_t requests = 10'000'000;
  std::string arch = "sw26010pro";
  unsigned threads = 0;
  std::filesystem::path out = "large-trace.ldmtrace";
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) throw ldmsim::ConfigError(fmt::format("{} needs a value", flag));
    const std::string value = argv[++i];
    if (flag == "--requests") {
      a.requests = std::stoull(value);
    } else if (flag == "--arch") {
      a.arch = value;
    } else if (flag == "--threads") {
      a.threads = static_cast<unsigned>(std::stoul(value));
    } else if (flag == "--out") {
      a.out = value;
    } else {
      throw ldmsim::ConfigError(fmt::format("unknown option {}", flag));
    }
  }
  return a;
}

constexpr std::size_t kSlotBytes = 64 * 1024;  // each core's slice of its group's buffer

/// `pairs` get/put pairs per core; tile sizes cycle through 64 B..2 KiB, offsets walk the core's slice.
void stream_tiles(ldmsim::Core& core, ldmsim::DevicePtr<std::uint32_t> buffer, std::uint64_t pairs) {
  auto tile = core.ldm().alloc<std::uint32_t>(512);
  const std::size_t base = static_cast<std::size_t>(core.rank()) * (kSlotBytes / 4);
  std::size_t offset = 0;
  for (std::uint64_t i = 0; i < pairs; ++i) {
    const std::size_t words = std::size_t{16} << (i % 6);
    if (offset + words > kSlotBytes / 4) offset = 0;
    auto span = tile.first(words);
    core.get(span, ldmsim::DevicePtr<const std::uint32_t>(buffer + base + offset)).wait();
    core.compute({.cycles = 20});
    core.put(buffer + base + offset, ldmsim::LdmSpan<const std::uint32_t>(span)).wait();
    offset += words;
  }
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse(argc, argv);
  const ldmsim::Arch arch = ldmsim::Arch::resolve(args.arch);
  const std::uint64_t cores = arch.total_cores();
  const std::uint64_t pairs = std::max<std::uint64_t>(1, args.requests / (2 * cores));

  reset_peak_rss();
  const auto t0 = Clock::now();
  ldmsim::Machine machine(arch, ldmsim::MachineOptions{.threads = args.threads});
  std::vector<ldmsim::DevicePtr<std::uint32_t>> buffers;
  for (std::uint32_t cg = 0; cg < arch.core_groups; ++cg) {
    buffers.push_back(machine.alloc<std::uint32_t>(arch.cores_per_group() * kSlotBytes / 4,
                                                   ldmsim::AllocOptions{.cg = static_cast<int>(cg)}));
  }
  machine
      .launch(ldmsim::LaunchSpec{.name = "stream-tiles"},
              [&](ldmsim::Core& core) { stream_tiles(core, buffers[static_cast<std::size_t>(core.cg())], pairs); })
      .join();
  const double simulate_s = seconds_since(t0);
  const double simulate_rss = peak_rss_mib();

  std::uint64_t events = 0;
  for (const ldmsim::TraceRecorder* t : machine.trace()) events += t->dma_count();
  reset_peak_rss();
  const auto t1 = Clock::now();
  machine.write_trace(args.out, {{"run", {{"workload", "large_trace_run"}}}});
  const double write_s = seconds_since(t1);
  const double write_rss = peak_rss_mib();
  const auto bytes = std::filesystem::file_size(args.out);

  const nlohmann::json result = {{"arch", arch.name},
                                 {"threads", machine.threads()},
                                 {"requests", events},
                                 {"simulated_cycles", machine.stats().cycles},
                                 {"simulate_s", simulate_s},
                                 {"simulate_events_per_s", static_cast<double>(events) / simulate_s},
                                 {"simulate_peak_rss_mib", simulate_rss},
                                 {"write_s", write_s},
                                 {"write_events_per_s", static_cast<double>(events) / write_s},
                                 {"write_peak_rss_mib", write_rss},
                                 {"trace_bytes", bytes},
                                 {"trace_bytes_per_event", static_cast<double>(bytes) / static_cast<double>(events)}};
  std::cout << result.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "large_trace_run: " << e.what() << "\n";
  return 2;
}
