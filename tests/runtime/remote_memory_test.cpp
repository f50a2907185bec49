// Remote memory: a DMA between a core group and another group's memory pays the arch's dma.remote latency and
// network rate on top of the local price, is counted as remote in stats.json and in the trace summary, and stays
// deterministic for any number of host threads.
#include <catch2/catch.hpp>
#include <cstdint>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

/// SW26010's timing with two groups and a priced network (estimates: the presets price remote as local until
/// tensors are placed where they are used; docs/timing-model.md).
Arch two_groups() {
  Arch a = Arch::preset("sw26010");
  a.core_groups = 2;
  a.dma.remote = {.latency_cycles = 250, .bytes_per_cycle = 8};
  return a;
}

struct Measured {
  Cycle cycles = 0;
  nlohmann::json stats;
};

/// Group 0's cores each read then write back 16 KiB of a buffer that lives in core group `home`'s memory.
Measured copy_from(int home, unsigned threads = 1) {
  MachineOptions options;
  options.threads = threads;
  Machine m(two_groups(), options);
  constexpr std::size_t kPerCore = 8192;  // fp16 elements
  const auto buf = m.alloc<f16>(kPerCore * 64, {.cg = home, .name = "data"});
  m.launch(LaunchSpec{.groups = {0}, .name = "copy"}, [&](Core& core) {
     auto tile = core.ldm().alloc<f16>(kPerCore);
     const auto at = buf + static_cast<std::size_t>(core.id()) * kPerCore;
     core.get(tile, DevicePtr<const f16>(at)).wait();
     core.put(at, LdmSpan<const f16>(tile)).wait();
   }).join();
  return {m.stats().cycles, m.stats().to_json(false)};
}

}  // namespace

TEST_CASE("a tensor in another core group's memory costs more than a local one, and is counted as remote",
          "[runtime][remote]") {
  const Measured local = copy_from(0), remote = copy_from(1);
  const DmaRemoteArch& r = two_groups().dma.remote;
  REQUIRE(r.latency_cycles > 0);
  REQUIRE(r.bytes_per_cycle > 0);
  // 64 cores' gets and puts of 16 KiB share group 0's link to the other group: at least the bytes at its rate.
  const std::uint64_t bytes = 64ull * 2 * 16384;
  CHECK(remote.cycles > local.cycles);
  CHECK(static_cast<double>(remote.cycles) >= static_cast<double>(bytes) / r.bytes_per_cycle + r.latency_cycles);
  CHECK(local.stats["dma_remote_bytes"] == 0);
  CHECK(local.stats["dma_local_bytes"] == bytes);
  CHECK(remote.stats["dma_remote_bytes"] == bytes);
  CHECK(remote.stats["dma_local_bytes"] == 0);
  CHECK(remote.stats["groups"][0]["dma_remote_bytes"] == bytes);
  CHECK(remote.stats["groups"][1]["dma_remote_bytes"] == 0);
}

TEST_CASE("remote pricing is deterministic across host threads", "[runtime][remote]") {
  const Measured one = copy_from(1, 1), two = copy_from(1, 2);
  CHECK(one.cycles == two.cycles);
  CHECK(one.stats == two.stats);
}

TEST_CASE("an arch without dma.remote prices remote memory as local", "[runtime][remote]") {
  Arch a = two_groups();
  a.dma.remote = {};
  Machine m(a);
  const auto buf = m.alloc<f16>(1024, {.cg = 1});
  m.launch(LaunchSpec{.groups = {0}, .name = "get"}, [&](Core& core) {
     if (core.id() != 0) return;
     auto tile = core.ldm().alloc<f16>(1024);
     core.get(tile, DevicePtr<const f16>(buf)).wait();
   }).join();
  CHECK(m.stats().dma_remote_bytes() == 2048);  // still counted: where the data lives is a fact, not a price
}

TEST_CASE("a replicated constant is read from each group's own copy, and a put into it traps", "[runtime][remote]") {
  Machine m(two_groups());
  const auto home = m.alloc<f16>(1024, {.cg = 0, .name = "weights"});
  const auto copy = m.alloc<f16>(1024, {.cg = 1, .name = "weights"});
  // Different values in the copy only to see which one a group reads (replicas hold the same bytes).
  m.upload(home, std::vector<f16>(1024, f16(1.0f)));
  m.upload(copy, std::vector<f16>(1024, f16(2.0f)));
  m.memory().add_replica(home.addr(), 1, copy.addr());
  const auto seen = m.alloc<f16>(2 * 1024, {.cg = 0});
  m.launch(LaunchSpec{.groups = {0, 1}, .name = "read"}, [&](Core& core) {
     if (core.id() != 0) return;
     auto tile = core.ldm().alloc<f16>(1024);
     core.get(tile, DevicePtr<const f16>(home)).wait();
     if (core.cg() == 1) return;  // group 1 reads its copy locally; only group 0 writes (locally) what it saw
     core.put(seen, LdmSpan<const f16>(tile)).wait();
   }).join();
  CHECK(m.stats().groups[1].dma_remote_bytes() == 0);
  CHECK(m.stats().groups[0].dma_remote_bytes() == 0);
  std::vector<f16> got(1024);
  m.download(got, DevicePtr<const f16>(seen));
  CHECK(static_cast<float>(got[0]) == 1.0f);
  // Group 1's get went to its copy: read it back through a kernel of group 1 writing what it saw.
  const auto seen1 = m.alloc<f16>(1024, {.cg = 1});
  m.launch(LaunchSpec{.groups = {1}, .name = "read1"}, [&](Core& core) {
     if (core.id() != 0) return;
     auto tile = core.ldm().alloc<f16>(1024);
     core.get(tile, DevicePtr<const f16>(home)).wait();
     core.put(seen1, LdmSpan<const f16>(tile)).wait();
   }).join();
  m.download(got, DevicePtr<const f16>(seen1));
  CHECK(static_cast<float>(got[0]) == 2.0f);
  CHECK(m.stats().groups[1].dma_remote_bytes() == 0);
  // Writing a replicated constant would leave the other copies stale: the put traps, naming it.
  try {
    m.launch(LaunchSpec{.groups = {1}, .name = "write"}, [&](Core& core) {
       if (core.id() != 0) return;
       auto tile = core.ldm().alloc<f16>(64);
       core.put(home, LdmSpan<const f16>(tile)).wait();
     }).join();
    FAIL("the put into a replicated constant did not trap");
  } catch (const Fault& f) {
    CHECK(f.kind() == FaultKind::kInvalidArgument);
    CHECK_THAT(f.what(), Catch::Contains("'weights'") && Catch::Contains("every core group's memory"));
  }
}
