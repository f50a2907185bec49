// Faults of the Core API itself: ldm-overflow (requested / free / high-water numbers), invalid-argument (BCAST and
// ROW puts, empty row masks, bad Ldm frees and allocations, foreign handles) and api-outside-kernel (a Core& used
// after its kernel returned, or by another core).
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

TEST_CASE("an ldm allocation that does not fit traps with requested, free and high-water bytes", "[fault][ldm]") {
  Machine m{Arch::preset("tiny")};  // 16384-byte local stores
  const auto f = trap_of(m.launch(LaunchSpec{.name = "tiles"}, [](Core& core) {
    if (core.id() != 3) return;
    core.compute({.cycles = 7});
    Ldm& ldm = core.ldm();
    auto a = ldm.alloc<std::byte>(8192);  // [0, 8192)
    auto b = ldm.alloc<std::byte>(4096);  // [8192, 12288): high water 12288
    ldm.free(a);                          // 12288 bytes free, the largest hole 8192
    (void)b;
    ldm.alloc<std::byte>(10000);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kLdmOverflow);
  CHECK(f->cg() == 0);
  CHECK(f->core() == 3);
  CHECK(f->cycle() == 7);
  CHECK_THAT(std::string(f->what()), Catch::StartsWith("trap ldm-overflow: cg 0 core 3 in kernel 'tiles' at cycle 7"));
  CHECK_THAT(f->detail(), Catch::Contains("Ldm::alloc of 10000 bytes does not fit the 16384-byte local store"));
  CHECK_THAT(f->detail(), Catch::Contains("12288 bytes free (largest free block 8192)"));
  CHECK_THAT(f->detail(), Catch::Contains("high-water mark 12288 bytes"));
  CHECK_THAT(f->detail(), Catch::Contains("hint: "));
  CHECK(f->field() == FaultField{"bytes", 10000});              // the request, typed
  CHECK(m.stats().groups[0].cores[3].ldm_high_water == 12288);  // recorded even though the kernel trapped
}

TEST_CASE("an allocation of exactly the whole local store fits", "[ldm]") {
  Machine m{Arch::preset("tiny")};
  std::vector<std::uint64_t> used(4, 0);
  CHECK_NOTHROW(m.launch(LaunchSpec{}, [&used](Core& core) {
                   auto all = core.ldm().alloc<std::byte>(core.arch().ldm_bytes);
                   used[static_cast<std::size_t>(core.id())] = all.ldm_addr() == 0 ? core.ldm().used() : 0;
                 }).join());
  CHECK(used == std::vector<std::uint64_t>(4, 16384));
  CHECK(m.stats().ldm_high_water() == 16384);
}

TEST_CASE("impossible Core API arguments trap invalid-argument", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(1024);
  auto run = [&](auto body) {
    return trap_of(m.launch(LaunchSpec{.name = "args"}, [x, body](Core& core) {
      if (core.id() != 1) return;
      core.compute({.cycles = 5});
      body(core, x);
    }));
  };
  SECTION("a BCAST put") {
    const auto f = run([](Core& core, DeviceAddr at) {
      DmaRequest r;
      r.op = DmaOp::kPut;
      r.mode = DmaMode::kBcast;
      r.main = at;
      r.length = 64;
      r.api = "Core::dma";
      core.dma(r).wait();
    });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
    CHECK(f->core() == 1);
    CHECK(f->cycle() == 5);
    CHECK_THAT(f->detail(), Catch::Contains("BCAST mode is defined for get only"));
    CHECK_THAT(f->detail(), Catch::Contains("hint: issue one PE-mode put per core"));
  }
  SECTION("a ROW put") {
    const auto f = run([](Core& core, DeviceAddr at) {
      DmaRequest r;
      r.op = DmaOp::kPut;
      r.mode = DmaMode::kRow;
      r.main = at;
      r.length = 64;
      core.dma(r).wait();
    });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
    CHECK_THAT(f->detail(), Catch::Contains("ROW mode is defined for get only"));
  }
  SECTION("a BCAST row mask of 0") {
    const auto f = run([](Core& core, DeviceAddr at) {
      auto buf = core.ldm().alloc<std::uint32_t>(16);
      core.bcast_get(buf, DevicePtr<const std::uint32_t>(at), 0).wait();
    });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
    CHECK_THAT(f->detail(), Catch::Contains("the row mask selects no row of the group"));
    CHECK_THAT(f->detail(), Catch::Contains("hint: set bits 0..1"));
  }
  SECTION("a BCAST row mask naming only rows the group does not have") {
    const auto f = run([](Core& core, DeviceAddr at) {
      auto buf = core.ldm().alloc<std::uint32_t>(16);
      core.bcast_get(buf, DevicePtr<const std::uint32_t>(at), 0b100).wait();  // tiny has rows 0 and 1
    });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
  }
  SECTION("freeing an ldm offset that is not an allocation") {
    const auto f = run([](Core& core, DeviceAddr) {
      auto buf = core.ldm().alloc<std::uint32_t>(16);
      core.ldm().free_at(buf.ldm_addr() + 4);
    });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
    CHECK(f->cycle() == 5);
    CHECK_THAT(f->detail(), Catch::Contains("Ldm::free: ldm offset 0x4 is not a live allocation"));
  }
  SECTION("freeing the same buffer twice") {
    const auto f = run([](Core& core, DeviceAddr) {
      auto buf = core.ldm().alloc<std::uint32_t>(16);
      core.ldm().free(buf);
      core.ldm().free(buf);
    });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
  }
  SECTION("allocating 0 bytes") {
    const auto f = run([](Core& core, DeviceAddr) { core.ldm().alloc_bytes(0); });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
    CHECK_THAT(f->detail(), Catch::Contains("cannot allocate 0 bytes"));
  }
  SECTION("an alignment that is not a power of two") {
    const auto f = run([](Core& core, DeviceAddr) { core.ldm().alloc_bytes(64, 12); });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
    CHECK_THAT(f->detail(), Catch::Contains("alignment 12 is not a power of two"));
  }
  SECTION("waiting on an empty handle") {
    const auto f = run([](Core& core, DeviceAddr) { core.wait(DmaHandle{}); });
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kInvalidArgument);
    CHECK_THAT(f->detail(), Catch::Contains("another core (or is empty)"));
  }
}

TEST_CASE("a Core& used after its kernel returned traps api-outside-kernel", "[fault]") {
  Machine m{Arch::preset("tiny")};
  Core* first = nullptr;
  const auto g = trap_of(m.launch(LaunchSpec{.name = "stash"}, [&first](Core& core) {
    if (core.id() == 0) {
      first = &core;
      core.compute({.cycles = 3});
      return;  // exits at cycle 3, before any other core runs (cores run in (cycle, id) order)
    }
    if (core.id() == 1) {
      core.compute({.cycles = 30});
      if (first != nullptr) first->compute({.cycles = 1});
    }
  }));
  REQUIRE(g);
  CHECK(g->kind() == FaultKind::kApiOutsideKernel);
  CHECK(g->cg() == 0);
  CHECK(g->core() == 0);   // the fault names the core whose API was used
  CHECK(g->cycle() == 3);  // ... at that core's clock
  CHECK(g->kernel() == "stash");
  CHECK_THAT(g->detail(), Catch::Contains("Core::compute called on a core whose kernel is not running"));
  CHECK_THAT(g->detail(), Catch::Contains("hint: use the Core& only inside the kernel it was passed to"));
}

TEST_CASE("a core calling another live core's API traps api-outside-kernel", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(256);
  Core* first = nullptr;
  const auto f = trap_of(m.launch(LaunchSpec{.name = "foreign"}, [&first, x](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(4);
    if (core.id() == 0) {
      first = &core;
      core.compute({.cycles = 100});
      core.get(buf, DevicePtr<const std::uint32_t>(x)).wait();  // yields at cycle 100: core 0 is live but parked
      return;
    }
    if (core.id() == 2) {
      core.compute({.cycles = 10});
      core.get(buf, DevicePtr<const std::uint32_t>(x)).wait();  // yields; resumes before core 0 (10 < 100)
      if (first != nullptr) first->ldm();
    }
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kApiOutsideKernel);
  CHECK(f->core() == 0);
  CHECK_THAT(f->detail(), Catch::Contains("Core::ldm called from outside this core's own kernel"));
  CHECK_THAT(f->detail(), Catch::Contains("hint: each kernel may use only the Core& it was given"));
  // The trap aborted the group: core 0 never completed its get.
  CHECK(m.stats().groups[0].cores[0].dma_requests == 0);
}
