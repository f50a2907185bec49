// Deadlock detection: a core that skips a group barrier, a row barrier a row member never reaches, a column
// barrier and an unbalanced repeated barrier all end in a deadlock fault whose message lists every core's state;
// a core working alone after the others exited is not a deadlock.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

TEST_CASE("a core that skips a group barrier deadlocks the group, the fault lists every core", "[fault][barrier]") {
  Machine m{Arch::preset("tiny")};  // 2x2, barrier_cycles 10
  const auto f = trap_of(m.launch(LaunchSpec{.name = "skip"}, [](Core& core) {
    if (core.id() == 0) {
      core.compute({.cycles = 5});
      return;  // skips the barrier
    }
    core.compute({.cycles = 10 * static_cast<Cycle>(core.id())});
    core.barrier(Scope::kGroup);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDeadlock);
  CHECK(f->cg() == 0);
  CHECK(f->core() == -1);   // a group-wide fault, not one core's
  CHECK(f->cycle() == 30);  // the latest clock of the group
  CHECK_FALSE(f->field());  // no request field is at fault
  const std::string what = f->what();
  CHECK_THAT(what, Catch::StartsWith("trap deadlock: cg 0 in kernel 'skip' at cycle 30: "));
  CHECK_THAT(what, Catch::Contains("every live core of the group is blocked"));
  CHECK_THAT(what, Catch::Contains("hint: "));
  CHECK_THAT(what, Catch::Contains("core 0 (row 0, col 0): exited at cycle 5"));
  CHECK_THAT(what,
             Catch::Contains("core 1 (row 0, col 1): waiting at a group barrier since cycle 10 (1 of 4 arrived)"));
  CHECK_THAT(what,
             Catch::Contains("core 2 (row 1, col 0): waiting at a group barrier since cycle 20 (2 of 4 arrived)"));
  CHECK_THAT(what,
             Catch::Contains("core 3 (row 1, col 1): waiting at a group barrier since cycle 30 (3 of 4 arrived)"));
  // The launch still ended cleanly: every core exited and the group's clock moved.
  int exits = 0;
  for (const Marker& mk : m.trace()[0]->markers()) exits += mk.kind == MarkerKind::kCoreExit ? 1 : 0;
  CHECK(exits == 4);
  CHECK(m.stats().groups[0].launches == 1);
}

TEST_CASE("a row barrier whose row member exits deadlocks, the other row is released", "[fault][barrier]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "row"}, [](Core& core) {
    if (core.id() == 1) return;  // row 0 = cores 0 and 1; core 1 never arrives
    core.compute({.cycles = core.id() == 0 ? Cycle{7} : 10 * static_cast<Cycle>(core.id())});
    core.barrier(Scope::kRow);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDeadlock);
  CHECK(f->cycle() == 40);  // row 1 was released at max(20, 30) + 10 = 40
  const std::string what = f->what();
  CHECK_THAT(what, Catch::Contains("core 0 (row 0, col 0): waiting at a row barrier since cycle 7 (1 of 2 arrived)"));
  CHECK_THAT(what, Catch::Contains("core 1 (row 0, col 1): exited at cycle 0"));
  CHECK_THAT(what, Catch::Contains("core 2 (row 1, col 0): exited at cycle 40"));
  CHECK_THAT(what, Catch::Contains("core 3 (row 1, col 1): exited at cycle 40"));
}

TEST_CASE("a column barrier with a missing member deadlocks", "[fault][barrier]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "col"}, [](Core& core) {
    if (core.id() == 3) return;  // column 1 = cores 1 and 3
    core.barrier(Scope::kCol);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDeadlock);
  CHECK_THAT(std::string(f->what()), Catch::Contains("core 1 (row 0, col 1): waiting at a column barrier"));
}

TEST_CASE("one barrier too few on one core deadlocks at the last barrier", "[fault][barrier]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "unbalanced"}, [](Core& core) {
    const int rounds = core.id() == 2 ? 2 : 3;
    for (int i = 0; i < rounds; ++i) core.barrier(Scope::kGroup);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDeadlock);
  CHECK(f->cycle() == 20);  // two barriers of 10 cycles each were released
  const std::string what = f->what();
  CHECK_THAT(what, Catch::Contains("core 2 (row 1, col 0): exited at cycle 20"));
  CHECK_THAT(what, Catch::Contains("core 0 (row 0, col 0): waiting at a group barrier since cycle 20"));
}

TEST_CASE("a core working alone while the others have exited is not a deadlock", "[fault][barrier]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(256);
  std::vector<Cycle> end(4, 0);
  REQUIRE_FALSE(trap_of(m.launch(LaunchSpec{}, [x, &end](Core& core) {
    if (core.id() == 2) {
      auto buf = core.ldm().alloc<std::uint32_t>(4);
      for (int i = 0; i < 50; ++i) {
        core.get(buf, DevicePtr<const std::uint32_t>(x)).wait();  // every issue is an interaction point
        core.compute({.cycles = 10});
      }
    }
    end[static_cast<std::size_t>(core.id())] = core.cycle();
  })));
  CHECK(end == std::vector<Cycle>{0, 0, 500, 0});
  CHECK(m.stats().groups[0].cores[2].dma_requests == 50);
}
