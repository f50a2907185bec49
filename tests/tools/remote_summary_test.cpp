// The trace summary tells local from remote DMA bytes per core group by the memory window of each request's
// main-memory address (the trace header's arch gives the window size).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/trace_analysis/summary.hpp"

using namespace ldmsim;

TEST_CASE("the trace summary counts remote bytes per core group", "[trace-summary][remote]") {
  Arch arch = Arch::preset("sw26010");
  arch.core_groups = 2;
  arch.dma.remote = {.latency_cycles = 250, .bytes_per_cycle = 8};
  Machine m(arch);
  const auto local = m.alloc<f16>(2048, {.cg = 0}), remote = m.alloc<f16>(2048, {.cg = 1});
  m.launch(LaunchSpec{.groups = {0}, .name = "mixed"}, [&](Core& core) {
     if (core.id() != 0) return;
     auto tile = core.ldm().alloc<f16>(2048);
     core.get(tile, DevicePtr<const f16>(local)).wait();
     core.get(tile, DevicePtr<const f16>(remote)).wait();
     core.put(remote, LdmSpan<const f16>(tile)).wait();
   }).join();
  const auto file =
      std::filesystem::temp_directory_path() / ("ldmsim-remote-" + std::to_string(getpid()) + ".ldmtrace");
  m.write_trace(file);
  const TraceSummary s = summarize_trace(file);
  std::filesystem::remove(file);
  REQUIRE(s.groups.size() >= 1);
  CHECK(s.groups[0].bytes() == 3 * 4096);
  CHECK(s.groups[0].remote_bytes() == 2 * 4096);
  CHECK(s.groups[0].remote_bytes() == m.stats().groups[0].dma_remote_bytes());
  CHECK(to_json(s)["groups"][0]["remote_bytes"] == 2 * 4096);
}
