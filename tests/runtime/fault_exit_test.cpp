// Faults raised when a kernel leaves: kernel-exception (std and non-std exceptions) and pending-dma-at-exit
// (requests never waited for), each with its location, cycle and message.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

TEST_CASE("a std::runtime_error thrown by a kernel becomes a kernel-exception fault", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "thrower"}, [](Core& core) {
    if (core.id() != 2) return;
    core.compute({.cycles = 77});
    throw std::runtime_error("tile index out of range");
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kKernelException);
  CHECK(f->cg() == 0);
  CHECK(f->core() == 2);
  CHECK(f->cycle() == 77);
  CHECK(f->kernel() == "thrower");
  CHECK(f->detail() == "the kernel threw: tile index out of range");
  CHECK(
      std::string(f->what()) ==
      "trap kernel-exception: cg 0 core 2 in kernel 'thrower' at cycle 77: the kernel threw: tile index out of range");
}

TEST_CASE("a non-std exception thrown by a kernel becomes a kernel-exception fault", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "int-thrower"}, [](Core& core) {
    if (core.id() != 1) return;
    core.compute({.cycles = 9});
    throw 42;
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kKernelException);
  CHECK(f->core() == 1);
  CHECK(f->cycle() == 9);
  CHECK_THAT(f->detail(), Catch::Contains("not a std::exception"));
}

TEST_CASE("a Fault thrown by a kernel itself is passed through unchanged", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "own"}, [](Core& core) {
    if (core.id() == 3) throw Fault(FaultKind::kInvalidArgument, {0, 3}, 11, "own", "custom check failed");
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kInvalidArgument);
  CHECK(f->cycle() == 11);
  CHECK(f->detail() == "custom check failed");
}

TEST_CASE("a kernel returning with DMA requests never waited for traps pending-dma-at-exit", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(1024);
  SECTION("two requests pending, the first named") {
    const auto f = trap_of(m.launch(LaunchSpec{.name = "forgetful"}, [x](Core& core) {
      if (core.id() != 1) return;
      auto buf = core.ldm().alloc<std::uint32_t>(32);
      core.compute({.cycles = 15});
      const DmaHandle first = core.get(buf.first(16), DevicePtr<const std::uint32_t>(x));
      const DmaHandle second = core.get(buf.subspan(16, 16), DevicePtr<const std::uint32_t>(x) + 16);
      (void)first;
      (void)second;
    }));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kPendingDmaAtExit);
    CHECK(f->cg() == 0);
    CHECK(f->core() == 1);
    CHECK(f->cycle() == 15);
    char main_hex[32];
    std::snprintf(main_hex, sizeof main_hex, "main 0x%llx, ldm 0x0", static_cast<unsigned long long>(x));
    CHECK_THAT(f->detail(), Catch::Contains("the kernel returned with 2 DMA request(s) never waited for"));
    CHECK_THAT(f->detail(), Catch::Contains("the first: Core::get get 64 bytes, " + std::string(main_hex)));
    CHECK_THAT(f->detail(), Catch::Contains("hint: wait() every handle (or call wait_all())"));
  }
  SECTION("one of two waited") {
    const auto f = trap_of(m.launch(LaunchSpec{}, [x](Core& core) {
      if (core.id() != 1) return;
      auto buf = core.ldm().alloc<std::uint32_t>(32);
      const DmaHandle first = core.get(buf.first(16), DevicePtr<const std::uint32_t>(x));
      const DmaHandle second = core.put(DevicePtr<std::uint32_t>(x) + 16, LdmSpan<const std::uint32_t>(buf));
      first.wait();
      (void)second;
    }));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kPendingDmaAtExit);
    CHECK_THAT(f->detail(), Catch::Contains("with 1 DMA request(s)"));
    CHECK_THAT(f->detail(), Catch::Contains("Core::put put 128 bytes"));
  }
  SECTION("wait_all clears them") {
    CHECK_FALSE(trap_of(m.launch(LaunchSpec{}, [x](Core& core) {
      auto buf = core.ldm().alloc<std::uint32_t>(32);
      const DmaHandle a = core.get(buf.first(16), DevicePtr<const std::uint32_t>(x));
      const DmaHandle b = core.get(buf.subspan(16, 16), DevicePtr<const std::uint32_t>(x) + 16);
      (void)a;
      (void)b;
      core.wait_all();
    })));
  }
}

TEST_CASE("the cores of a launch after a trapped one start with no request in flight and an empty store", "[fault]") {
  // A launch's cores take over the host storage of the last launch's cores in their slots (Core::Storage): what a
  // core left behind (requests never waited for, ldm blocks never freed, a fault mid-kernel) must not reach the next.
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(4096);
  const auto leave_behind = [x](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(64);
    (void)core.ldm().alloc<std::uint32_t>(100);
    for (std::size_t i = 0; i < 4; ++i) {
      (void)core.get(buf.subspan(16 * i, 16), DevicePtr<const std::uint32_t>(x) + 16 * i);
    }
    if (core.id() == 2) throw std::runtime_error("gave up with requests in flight");
  };
  REQUIRE(trap_of(m.launch(LaunchSpec{.name = "leaver"}, leave_behind)));  // a thrower and requests left in flight
  for (int round = 0; round < 2; ++round) {
    std::vector<std::size_t> pending(16, 99), used(16, 99), high_water(16, 99);
    std::vector<LdmAddr> first(16, 99);
    CHECK_FALSE(trap_of(m.launch(LaunchSpec{.name = "fresh"}, [&](Core& core) {
      const auto id = static_cast<std::size_t>(core.id());
      pending[id] = core.pending_dma();
      used[id] = core.ldm().used();
      high_water[id] = core.ldm().high_water();
      first[id] = core.ldm().alloc<std::uint32_t>(8).ldm_addr();
      core.wait_all();
    })));
    for (std::size_t id = 0; id < m.arch().cores_per_group(); ++id) {
      INFO("round " << round << " core " << id);
      CHECK(pending[id] == 0);
      CHECK(used[id] == 0);
      CHECK(high_water[id] == 0);
      CHECK(first[id] == 0);
    }
    // The next round follows a launch that left requests in flight without a fault on other cores' slots.
    (void)trap_of(m.launch(LaunchSpec{.name = "leaver again"}, leave_behind));
  }
}
