// Node barriers (Scope::kNode) in a launch whose core groups run together (LaunchSpec::node_sync): every core of
// every group leaves at max(arrival) + node_barrier_cycles; repeated and mixed with group barriers; a release
// marker in each group's trace; a trap without node_sync; a deadlock when a core skips it; a fault in one group
// ends the launch instead of hanging the others; the same cycles for any host thread count; node-sync sets.
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {

constexpr Cycle kNodeBarrier = 40;
constexpr int kGroups = 3;
constexpr int kCores = 4;

/// 3 core groups of 2 x 2 cores; a group barrier costs 10 cycles, a node barrier 40.
Arch arch() {
  Arch a = Arch::preset("tiny");
  a.core_groups = kGroups;
  a.node_barrier_cycles = static_cast<std::uint32_t>(kNodeBarrier);
  return Arch::from_json(a.to_json(), "test");
}

/// Cycles core `id` of group `cg` works before the barrier: 10 * (its index in the node + 1).
Cycle work_of(const Core& core) {
  return 10 * static_cast<Cycle>(core.cg() * kCores + core.id() + 1);
}

using Clocks = std::vector<std::vector<Cycle>>;

/// Every core works work_of(core) cycles, then meets the others at one node barrier; the clocks after it.
Clocks node_barrier_run(Machine& m) {
  Clocks after(kGroups, std::vector<Cycle>(kCores, 0));
  m.launch(LaunchSpec{.name = "node", .node_sync = true}, [&after](Core& core) {
     core.compute({.cycles = work_of(core)});
     core.barrier(Scope::kNode);
     after[static_cast<std::size_t>(core.cg())][static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  return after;
}

Clocks node_barrier_run(unsigned threads) {
  Machine m{arch(), MachineOptions{.threads = threads}};
  return node_barrier_run(m);
}

}  // namespace

TEST_CASE("a node barrier releases every core of every group at the latest arrival plus its cost", "[barrier][node]") {
  Machine m{arch()};
  const Clocks after = node_barrier_run(m);
  const Cycle release = 10 * kGroups * kCores + kNodeBarrier;  // the last arrival (120) + 40
  CHECK(after == Clocks(kGroups, std::vector<Cycle>(kCores, release)));
  const RunStats s = m.stats();
  for (int cg = 0; cg < kGroups; ++cg) {
    INFO("cg " << cg);
    const auto& g = s.groups[static_cast<std::size_t>(cg)];
    CHECK(g.cycles == release);
    CHECK(g.cores[1].barrier_wait_cycles == release - 10 * static_cast<Cycle>(cg * kCores + 2));
    int releases = 0;
    for (const Marker& mk : m.trace()[static_cast<std::size_t>(cg)]->markers()) {
      if (mk.kind != MarkerKind::kBarrier) continue;
      ++releases;
      CHECK(mk.cycle == release);
      CHECK(mk.value == 3);
      CHECK(mk.core == -1);
    }
    CHECK(releases == 1);
  }
}

TEST_CASE("repeated node barriers mix with group barriers", "[barrier][node]") {
  Machine m{arch()};
  Clocks after(kGroups, std::vector<Cycle>(kCores, 0));
  m.launch(LaunchSpec{.node_sync = true}, [&after](Core& core) {
     core.compute({.cycles = work_of(core)});
     core.barrier(Scope::kGroup);  // group cg leaves at 10 * 4 * (cg + 1) + 10
     core.barrier(Scope::kNode);   // everyone at 130 + 40 = 170
     if (core.cg() == 0 && core.id() == 0) core.compute({.cycles = 1000});
     core.barrier(Scope::kNode);  // 1170 + 40
     after[static_cast<std::size_t>(core.cg())][static_cast<std::size_t>(core.id())] = core.cycle();
   }).join();
  CHECK(after == Clocks(kGroups, std::vector<Cycle>(kCores, 1210)));
}

TEST_CASE("a node barrier without node_sync traps with a hint", "[barrier][node][fault]") {
  Machine m{arch()};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "lonely"}, [](Core& core) { core.barrier(Scope::kNode); }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kInvalidArgument);
  CHECK_THAT(std::string(f->what()), Catch::Contains("hint: set LaunchSpec::node_sync"));
}

TEST_CASE("a core that skips a node barrier deadlocks the launch, with every waiting core listed", "[barrier][node]") {
  Machine m{arch()};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "skip", .node_sync = true}, [](Core& core) {
    core.compute({.cycles = work_of(core)});
    if (core.cg() == 2 && core.id() == 3) return;
    core.barrier(Scope::kNode);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDeadlock);
  CHECK(f->cg() == 0);
  const std::string what = f->what();
  CHECK_THAT(what, Catch::Contains("every live core of the launch's core groups is blocked"));
  CHECK_THAT(
      what, Catch::Contains("cg 0 core 0 (row 0, col 0): waiting at a node barrier since cycle 10 (11 of 12 arrived)"));
  CHECK_THAT(what, Catch::Contains("cg 2 core 3 (row 1, col 1): exited at cycle 120"));
  CHECK_THAT(
      what, Catch::Contains("cg 0 core 3 (row 1, col 1): waiting at a node barrier since cycle 40 (11 of 12 arrived)"));
  CHECK(f->cycle() == 120);
}

TEST_CASE("a fault in one group ends a node-synchronised launch instead of leaving the others waiting",
          "[barrier][node][fault]") {
  Machine m{arch()};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "throws", .node_sync = true}, [](Core& core) {
    core.compute({.cycles = work_of(core)});
    if (core.cg() == 1 && core.id() == 2) throw std::runtime_error("bad tile");
    core.barrier(Scope::kNode);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kKernelException);
  CHECK(f->cg() == 1);
  CHECK(f->core() == 2);
  CHECK_THAT(std::string(f->what()), Catch::Contains("bad tile"));
  // The other groups were aborted by the fault, not left to be found deadlocked: they recorded no fault.
  for (const std::size_t cg : {0u, 2u}) {
    for (const Marker& mk : m.trace()[cg]->markers()) CHECK(mk.kind != MarkerKind::kFault);
  }
}

// A node launch runs on one host thread whatever MachineOptions::threads says: the option must change nothing.
TEST_CASE("node barrier cycles are the same for any host thread count", "[barrier][node][determinism]") {
  const Clocks one = node_barrier_run(1);
  CHECK(node_barrier_run(2) == one);
  CHECK(node_barrier_run(3) == one);
}

TEST_CASE("node_barrier_cycles defaults to barrier_cycles and is range-checked", "[barrier][node][arch]") {
  nlohmann::json j = Arch::preset("tiny").to_json();
  j["core_groups"]["cores"].erase("node_barrier_cycles");
  CHECK(Arch::from_json(j, "test").node_barrier_cycles == 10);
  j["core_groups"]["cores"]["node_barrier_cycles"] = -1;
  CHECK_THROWS_WITH(Arch::from_json(j, "test"), Catch::Contains("node_barrier_cycles"));
}

TEST_CASE("node-sync sets: a node barrier joins the groups of its set only, sets run on any number of threads",
          "[barrier][node]") {
  // Groups {0, 2} and {1}: a barrier in the first set releases at its own latest arrival; group 1 meets only
  // itself (and does a different number of node barriers, which would deadlock one node-wide set).
  const auto run = [](unsigned threads) {
    Machine m{arch(), MachineOptions{.threads = threads}};
    Clocks after(kGroups, std::vector<Cycle>(kCores, 0));
    m.launch(LaunchSpec{.name = "sets", .node_sync_sets = {{2, 0}, {1}}}, [&after](Core& core) {
       core.compute({.cycles = work_of(core)});
       core.barrier(Scope::kNode);
       if (core.cg() == 1) core.barrier(Scope::kNode);
       after[static_cast<std::size_t>(core.cg())][static_cast<std::size_t>(core.id())] = core.cycle();
     }).join();
    return after;
  };
  const Clocks one = run(1);
  // Set {0, 2}: last arrival is group 2's last core (10 * 12 = 120) + 40. Set {1}: 10 * 8 = 80 + 40, then + 40.
  CHECK(one[0] == std::vector<Cycle>(kCores, 120 + kNodeBarrier));
  CHECK(one[2] == std::vector<Cycle>(kCores, 120 + kNodeBarrier));
  CHECK(one[1] == std::vector<Cycle>(kCores, 80 + 2 * kNodeBarrier));
  CHECK(run(2) == one);
  CHECK(run(3) == one);
  Machine m{arch()};
  const auto bad = [&](std::vector<std::vector<int>> sets) {
    m.launch(LaunchSpec{.groups = {0, 1, 2}, .name = "bad", .node_sync_sets = std::move(sets)}, [](Core&) {}).join();
  };
  CHECK_THROWS_WITH(bad({{0, 1}}), Catch::Contains("every group of the launch exactly once"));
  CHECK_THROWS_WITH(bad({{0, 1}, {1, 2}}), Catch::Contains("every group of the launch exactly once"));
  CHECK_THROWS_WITH(bad({{0, 1, 2}, {}}), Catch::Contains("a node_sync set is empty"));
}
