// Barrier semantics on a 2 x 3 group: group, row and column scopes release every participant at
// max(arrival) + barrier_cycles; repeated barriers; barrier_wait_cycles; release markers in the trace.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

constexpr Cycle kBarrier = 25;

/// 2 rows x 3 cols, barrier_cycles 25, 2 flops per cycle.
Arch arch() {
  Arch a = Arch::preset("tiny");
  a.rows = 2;
  a.cols = 3;
  a.barrier_cycles = static_cast<std::uint32_t>(kBarrier);
  a.flops_per_cycle = 2;
  return Arch::from_json(a.to_json(), "test");
}

/// Arrival cycle of core i: 100 * (i + 1), charged as flops (2 per cycle).
std::uint64_t flops_for(int id) {
  return 200 * static_cast<std::uint64_t>(id + 1);
}

std::vector<Cycle> after_one_barrier(Machine& m, Scope scope) {
  std::vector<Cycle> after(6, 0);
  m.launch(LaunchSpec{.name = "barrier"}, [&after, scope](Core& core) {
     core.compute({.flops = flops_for(core.id())});
     core.barrier(scope);
     after[static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  return after;
}

}  // namespace

TEST_CASE("compute charges flops / flops_per_cycle rounded up, plus raw cycles", "[barrier]") {
  Machine m{arch()};
  std::vector<Cycle> c(6, 0);
  m.launch(LaunchSpec{}, [&c](Core& core) {
     core.compute({.flops = 3});               // ceil(3 / 2) = 2
     core.compute({.flops = 4, .cycles = 5});  // 2 + 5
     c[static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  CHECK(c == std::vector<Cycle>(6, 9));
  CHECK(m.stats().groups[0].cores[0].busy_cycles == 9);
}

TEST_CASE("compute(KernelWork) charges the arch's compute model", "[barrier][compute]") {
  Arch a = Arch::preset("tiny");
  a.compute.unit(DataType::kF32) = VectorUnit{4, 1.0};
  a.compute.loop_overhead_cycles = 3;
  Machine m{a};
  std::vector<Cycle> c(4, 0);
  m.launch(LaunchSpec{}, [&c](Core& core) {
     core.compute(KernelWork{.type = DataType::kF32, .vector_fmas = 40, .ldm_accesses = 7, .loops = 1});  // 40 + 3
     core.compute(core.arch().compute.matmul_tile(DataType::kF32, 1, 4, 5, false));
     c[static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  // The tile: one 1 x 1 block, 5 FMAs, 5 x 2 loads + 1 store = 11 accesses (tiny does 1 per cycle), 1 loop.
  CHECK(c == std::vector<Cycle>(4, 43 + 11 + 3));
  CHECK(m.stats().groups[0].cores[0].busy_cycles == 57);
}

TEST_CASE("a group barrier releases everyone at the latest arrival plus barrier_cycles", "[barrier]") {
  Machine m{arch()};
  const auto after = after_one_barrier(m, Scope::kGroup);
  // Arrivals 100, 200, ..., 600: all leave at 600 + 25.
  CHECK(after == std::vector<Cycle>(6, 625));
  const RunStats s = m.stats();
  for (int i = 0; i < 6; ++i) {
    INFO("core " << i);
    CHECK(s.groups[0].cores[static_cast<std::size_t>(i)].barrier_wait_cycles == 625 - 100 * static_cast<Cycle>(i + 1));
    CHECK(s.groups[0].cores[static_cast<std::size_t>(i)].busy_cycles == 100 * static_cast<Cycle>(i + 1));
  }
  CHECK(s.cycles == 625);
  std::vector<Marker> releases;
  for (const Marker& mk : m.trace()[0]->markers())
    if (mk.kind == MarkerKind::kBarrier) releases.push_back(mk);
  REQUIRE(releases.size() == 1);
  CHECK(releases[0].cycle == 625);
  CHECK(releases[0].value == 0);  // group scope
  CHECK(releases[0].core == 5);   // the last arrival
}

TEST_CASE("a row barrier waits only for the row", "[barrier]") {
  Machine m{arch()};
  const auto after = after_one_barrier(m, Scope::kRow);
  // Row 0 = cores 0..2 (arrivals 100..300) -> 325; row 1 = cores 3..5 (400..600) -> 625.
  CHECK(after == std::vector<Cycle>{325, 325, 325, 625, 625, 625});
  std::vector<Cycle> release_cycles;
  for (const Marker& mk : m.trace()[0]->markers())
    if (mk.kind == MarkerKind::kBarrier) {
      CHECK(mk.value == 1);
      release_cycles.push_back(mk.cycle);
    }
  CHECK(release_cycles == std::vector<Cycle>{325, 625});
}

TEST_CASE("a column barrier waits only for the column", "[barrier]") {
  Machine m{arch()};
  const auto after = after_one_barrier(m, Scope::kCol);
  // Column c = cores c and c + 3: arrivals (100, 400), (200, 500), (300, 600).
  CHECK(after == std::vector<Cycle>{425, 525, 625, 425, 525, 625});
  const RunStats s = m.stats();
  CHECK(s.groups[0].cores[0].barrier_wait_cycles == 325);
  CHECK(s.groups[0].cores[3].barrier_wait_cycles == 25);
}

TEST_CASE("repeated barriers each release at their own latest arrival", "[barrier]") {
  Machine m{arch()};
  std::vector<std::vector<Cycle>> seen(6);
  m.launch(LaunchSpec{}, [&seen](Core& core) {
     auto& mine = seen[static_cast<std::size_t>(core.id())];
     for (int round = 0; round < 3; ++round) {
       // The slowest core changes every round: core (round * 2) computes 60 cycles, the others 10.
       core.compute({.cycles = core.id() == round * 2 ? Cycle{60} : Cycle{10}});
       core.barrier(Scope::kGroup);
       mine.push_back(core.cycle());
     }
     core.barrier(Scope::kRow);  // scopes can be mixed
     mine.push_back(core.cycle());
   }).join();
  // Each round: latest arrival = previous release + 60, release 25 later: 85, 170, 255; then a row barrier 280.
  for (const auto& mine : seen) CHECK(mine == std::vector<Cycle>{85, 170, 255, 280});
  const RunStats s = m.stats();
  // Core 0 was slowest once (waited 0 + 25) and fast twice (waited 50 + 25 each), plus 25 at the row barrier.
  CHECK(s.groups[0].cores[0].barrier_wait_cycles == 25 + 75 + 75 + 25);
  CHECK(s.groups[0].cores[1].barrier_wait_cycles == 75 * 3 + 25);
}

TEST_CASE("DMA after a barrier is issued at the release cycle", "[barrier]") {
  Arch a = arch();
  a.dma.timing = {{"model", "ideal"}, {"issue_cycles", 3}, {"latency_cycles", 40}};
  Machine m{Arch::from_json(a.to_json(), "test")};
  const DeviceAddr x = m.allocate_bytes(1024);
  std::vector<Cycle> after(6, 0);
  m.launch(LaunchSpec{}, [&after, x](Core& core) {
     auto buf = core.ldm().alloc<std::uint32_t>(16);
     core.compute({.cycles = static_cast<Cycle>(core.id()) * 10});
     core.barrier();
     core.get(buf, DevicePtr<const std::uint32_t>(x)).wait();
     after[static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  // Release at 50 + 25 = 75; issue 3 cycles; complete 40 later.
  CHECK(after == std::vector<Cycle>(6, 118));
  m.trace()[0]->for_each_dma([](const DmaEvent& e) {
    CHECK(e.issue == 78);
    CHECK(e.end == 118);
  });
}
