// End-to-end FCFS contention of the fcfs-bandwidth model on a Machine: four cores of tiny each get 256 aligned
// bytes at cycle 0; every issue/start/end and every core's clock after wait is computed by hand below.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

Arch contended() {
  Arch a = Arch::preset("tiny");
  a.dma.timing = {{"model", "fcfs-bandwidth"},
                  {"issue_cycles", 10},
                  {"latency_cycles", 100},
                  {"bytes_per_cycle", 8},
                  {"request_overhead_cycles", 4}};
  return Arch::from_json(a.to_json(), "test");
}

}  // namespace

TEST_CASE("four cores contending for one engine are served first-come-first-served", "[timing]") {
  // Each core pays issue_cycles = 10, so all four requests reach the engine at cycle 10, in core-id order.
  // Each request is 256 bytes at a 128-aligned address: 2 transactions of 128 bytes, so the engine is busy for
  // overhead + 2 * 128 / 8 = 4 + 32 = 36 cycles per request, and each completes latency = 100 cycles after it
  // leaves the engine:
  //   core 0: start 10,  engine free at  46, end  46 + 100 = 146
  //   core 1: start 46,  engine free at  82, end 182
  //   core 2: start 82,  engine free at 118, end 218
  //   core 3: start 118, engine free at 154, end 254
  // wait() moves each core to its request's end.
  Machine m{contended()};
  const DeviceAddr x = m.allocate_bytes(1024, {.alignment = 256});
  std::vector<Cycle> after(4, 0);
  m.launch(LaunchSpec{.name = "fcfs"}, [&after, x](Core& core) {
     auto buf = core.ldm().alloc<std::byte>(256);
     core.get(buf, DevicePtr<const std::byte>(x) + static_cast<std::size_t>(core.id()) * 256).wait();
     after[static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  CHECK(after == std::vector<Cycle>{146, 182, 218, 254});

  std::vector<DmaEvent> events;
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 4);
  const Cycle start[] = {10, 46, 82, 118};
  const Cycle end[] = {146, 182, 218, 254};
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("request " << i);
    CHECK(events[i].core == i);  // recorded in engine (FCFS) order
    CHECK(events[i].issue == 10);
    CHECK(events[i].start == start[i]);
    CHECK(events[i].end == end[i]);
  }
  const RunStats s = m.stats();
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("core " << i);
    CHECK(s.groups[0].cores[i].busy_cycles == 10);
    CHECK(s.groups[0].cores[i].dma_wait_cycles == end[i] - 10);
  }
  CHECK(s.cycles == 254);
  CHECK(s.seconds == Approx(254e-9));  // tiny runs at 1 GHz
}

TEST_CASE("a later request reaches an idle engine and starts at its issue cycle", "[timing]") {
  // Core 0 issues at 0 (reaches the engine at 10, busy until 46, ends 146). Core 1 first computes 100 cycles, so
  // its request reaches the engine at 110 > 46: no queueing, start 110, busy until 146, end 246.
  // Core 2 computes 30: reaches the engine at 40 while core 0's request is served: start 46, end 182.
  // A 256-byte request at 64 mod 128 spans 3 transactions: 4 + 3 * 16 = 52 cycles of service.
  Machine m{contended()};
  const DeviceAddr x = m.allocate_bytes(4096, {.alignment = 256});
  std::vector<Cycle> after(4, 0);
  m.launch(LaunchSpec{}, [&after, x](Core& core) {
     auto buf = core.ldm().alloc<std::byte>(256);
     const DevicePtr<const std::byte> src(x);
     if (core.id() == 1) core.compute({.cycles = 100});
     if (core.id() == 2) core.compute({.cycles = 30});
     if (core.id() == 3) {
       core.compute({.cycles = 300});
       core.get(buf, src + 1024 + 64).wait();  // reaches the engine at 310, idle: 310 + 52 + 100 = 462
     } else {
       core.get(buf, src + static_cast<std::size_t>(core.id()) * 256).wait();
     }
     after[static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  CHECK(after == std::vector<Cycle>{146, 246, 182, 462});
}

TEST_CASE("fractional service times round up only at the edges", "[timing]") {
  // bytes_per_cycle 3: one 128-byte transaction is 42.67 cycles of service; the engine keeps the fraction.
  // Two requests reach the engine at 10: the first is served over [10, 52.67) and ends ceil(52.67 + 100) = 153;
  // the second starts at ceil(52.67) = 53, the engine frees at 95.33, and it ends ceil(195.33) = 196.
  Arch a = Arch::preset("tiny");
  a.dma.timing = {{"model", "fcfs-bandwidth"}, {"issue_cycles", 10}, {"latency_cycles", 100}, {"bytes_per_cycle", 3}};
  Machine m{Arch::from_json(a.to_json(), "test")};
  const DeviceAddr x = m.allocate_bytes(256, {.alignment = 256});
  std::vector<Cycle> after(4, 0);
  m.launch(LaunchSpec{}, [&after, x](Core& core) {
     if (core.id() > 1) return;
     auto buf = core.ldm().alloc<std::byte>(128);
     core.get(buf, DevicePtr<const std::byte>(x) + static_cast<std::size_t>(core.id()) * 128).wait();
     after[static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  CHECK(after[0] == 153);
  CHECK(after[1] == 196);
  std::vector<DmaEvent> events;
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 2);
  CHECK(events[1].start == 53);
}

TEST_CASE("requests reach the engine in simulated-time order, whatever the core ids", "[timing]") {
  // Core i first computes (3 - i) * 100 cycles, so core 3 issues first (reaches the engine at 10), then core 2
  // (110), core 1 (210), core 0 (310). Each is served on an idle engine: end = arrival + 36 + 100.
  Machine m{contended()};
  const DeviceAddr x = m.allocate_bytes(1024, {.alignment = 256});
  m.launch(LaunchSpec{}, [x](Core& core) {
     auto buf = core.ldm().alloc<std::byte>(256);
     core.compute({.cycles = static_cast<Cycle>(3 - core.id()) * 100});
     core.get(buf, DevicePtr<const std::byte>(x) + static_cast<std::size_t>(core.id()) * 256).wait();
   }).join();
  std::vector<DmaEvent> events;
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("engine order " << i);
    CHECK(events[i].core == 3 - i);
    CHECK(events[i].issue == 10 + 100 * i);
    CHECK(events[i].start == events[i].issue);
    CHECK(events[i].end == events[i].issue + 136);
  }
}
