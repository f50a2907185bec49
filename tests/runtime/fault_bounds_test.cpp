// dma-out-of-bounds and dma-field-overflow traps raised through the kernel API: past a region's end, before its
// start, past the local store, at unallocated and freed addresses; zero, too wide and inconsistent fields.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"
#include "support/dma_requests.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {

/// Runs `request` on core 1 at cycle 40 and returns the fault.
std::optional<Fault> trap_request(Machine& m, DmaRequest request) {
  return trap_of(m.launch(LaunchSpec{.name = "bounds"}, [request](Core& core) {
    if (core.id() != 1) return;
    core.compute({.cycles = 40});
    core.ldm().alloc_bytes(1024);
    core.dma(request).wait();
  }));
}

DmaRequest get_request(DeviceAddr main, std::uint64_t ldm, std::uint64_t length, std::uint64_t bsize = 0,
                       std::uint64_t stride = 0) {
  return testing::dma_get(main, ldm, length, bsize, stride);
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void check_location(const Fault& f, FaultKind kind) {
  CHECK(f.kind() == kind);
  CHECK(f.cg() == 0);
  CHECK(f.core() == 1);
  CHECK(f.cycle() == 40);
  CHECK(f.kernel() == "bounds");
}

}  // namespace

TEST_CASE("a get reaching one byte past a region's end traps out-of-bounds and names the region", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(63, {.name = "weights"});
  SECTION("the whole region plus the byte after it") {
    const auto f = trap_request(m, get_request(x, 0, 64));
    REQUIRE(f);
    check_location(*f, FaultKind::kDmaOutOfBounds);
    CHECK_THAT(f->detail(), Catch::Contains("main-memory range [" + hex(x) + ", " + hex(x + 64) +
                                            ") is not inside one live region"));
    CHECK_THAT(f->detail(),
               Catch::Contains("the nearest region is 'weights' [" + hex(x) + ", " + hex(x + 63) + ") of 63 bytes"));
    CHECK_THAT(f->detail(), Catch::Contains("hint: check the tile offset and length"));
  }
  SECTION("the same request one granule shorter is legal") {
    CHECK_FALSE(trap_request(m, get_request(x, 0, 60)));
  }
}

TEST_CASE("a get starting before a region traps out-of-bounds", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr pad = m.allocate_bytes(256);
  const DeviceAddr x = m.allocate_bytes(256, {.name = "x"});
  REQUIRE(x == pad + 256);
  m.free_bytes(pad);
  // One granule before x (the finest step a legal address can take); the byte-exact case is in
  // tests/dma/validation_test.cpp.
  const auto f = trap_request(m, get_request(x - 4, 0, 8));
  REQUIRE(f);
  check_location(*f, FaultKind::kDmaOutOfBounds);
  CHECK_THAT(f->detail(), Catch::Contains("[" + hex(x - 4) + ", " + hex(x + 4) + ")"));
  CHECK_THAT(f->detail(), Catch::Contains("'x'"));
  CHECK_FALSE(trap_request(m, get_request(x, 0, 8)));
}

TEST_CASE("an ldm range past ldm_bytes traps out-of-bounds with the ldm range", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(4096);
  const std::uint64_t ldm = m.arch().ldm_bytes;  // 16384
  SECTION("ending one granule past the local store") {
    const auto f = trap_request(m, get_request(x, ldm - 64, 68));
    REQUIRE(f);
    check_location(*f, FaultKind::kDmaOutOfBounds);
    CHECK_THAT(f->detail(), Catch::Contains("ldm range [0x3fc0, 0x4004) is outside the 16384-byte local store"));
  }
  SECTION("starting at ldm_bytes") {
    const auto f = trap_request(m, get_request(x, ldm, 4));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
  }
  SECTION("ending exactly at ldm_bytes is legal") {
    CHECK_FALSE(trap_request(m, get_request(x, ldm - 64, 64)));
  }
}

TEST_CASE("a get from an address no region covers traps out-of-bounds", "[fault]") {
  SECTION("nothing allocated at all") {
    Machine m{Arch::preset("tiny")};
    const auto f = trap_request(m, get_request(MainMemory::kBase + 4096, 0, 16));
    REQUIRE(f);
    check_location(*f, FaultKind::kDmaOutOfBounds);
    CHECK_THAT(f->detail(), Catch::Contains("no region is allocated"));
  }
  SECTION("a hole between regions") {
    Machine m{Arch::preset("tiny")};
    const DeviceAddr a = m.allocate_bytes(256, {.name = "a"});
    const auto f = trap_request(m, get_request(a + 1024 * 1024, 0, 16));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
    CHECK_THAT(f->detail(), Catch::Contains("the nearest region is 'a'"));
  }
  SECTION("address 0") {
    Machine m{Arch::preset("tiny")};
    m.allocate_bytes(256);
    const auto f = trap_request(m, get_request(0, 0, 16));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
  }
}

TEST_CASE("a get from a freed region traps out-of-bounds", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(256, {.name = "tmp"});
  REQUIRE_FALSE(trap_request(m, get_request(x, 0, 256)));
  m.free_bytes(x);
  const auto f = trap_request(m, get_request(x, 0, 256));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
  CHECK(f->core() == 1);
  CHECK_THAT(f->detail(), Catch::Contains("no region is allocated"));
}

TEST_CASE("a put out of bounds traps and leaves the neighbouring region untouched", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr a = m.allocate_bytes(60);
  const DeviceAddr b = m.allocate_bytes(256);
  m.write_bytes(b, std::vector<std::byte>(256, std::byte{0x5A}));
  // a's region is 60 bytes; a 64-byte put stays inside a's 256-byte slot, but must not be carried out.
  DmaRequest r = get_request(a, 0, 64);
  r.op = DmaOp::kPut;
  const auto f = trap_request(m, r);
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
  std::vector<std::byte> out(60);
  m.read_bytes(a, out);
  CHECK(out == std::vector<std::byte>(60, std::byte{0}));
  std::vector<std::byte> rest(256);
  m.read_bytes(b, rest);
  CHECK(rest == std::vector<std::byte>(256, std::byte{0x5A}));
}

TEST_CASE("descriptor fields that are zero, too wide or inconsistent trap field-overflow", "[fault]") {
  Machine m{Arch::preset("tiny")};  // 20-bit length, bsize and stride fields
  const DeviceAddr x = m.allocate_bytes(4096);
  SECTION("length 0") {
    const auto f = trap_request(m, get_request(x, 0, 0));
    REQUIRE(f);
    check_location(*f, FaultKind::kDmaFieldOverflow);
    CHECK_THAT(f->detail(), Catch::Contains("length must be > 0"));
    CHECK_THAT(f->detail(), Catch::Contains("hint: "));
  }
  SECTION("length 2^20 does not fit the 20-bit field") {
    const auto f = trap_request(m, get_request(x, 0, 1u << 20));
    REQUIRE(f);
    check_location(*f, FaultKind::kDmaFieldOverflow);
    CHECK_THAT(f->detail(),
               Catch::Contains("length = 1048576 does not fit the descriptor's 20-bit field (max 1048575)"));
    CHECK_THAT(f->detail(), Catch::Contains("hint: split the transfer"));
  }
  SECTION("bsize that does not divide length") {
    const auto f = trap_request(m, get_request(x, 0, 24, 16, 0));
    REQUIRE(f);
    check_location(*f, FaultKind::kDmaFieldOverflow);
    CHECK_THAT(f->detail(), Catch::Contains("length 24 is not a whole number of 16-byte blocks"));
    CHECK_THAT(f->detail(), Catch::Contains("hint: make length a multiple of bsize (e.g. 16 or 32)"));
  }
  SECTION("stride without bsize") {
    const auto f = trap_request(m, get_request(x, 0, 64, 0, 16));
    REQUIRE(f);
    check_location(*f, FaultKind::kDmaFieldOverflow);
    CHECK_THAT(f->detail(), Catch::Contains("a stride needs a block size (bsize is 0)"));
  }
  SECTION("bsize 2^20") {
    const auto f = trap_request(m, get_request(x, 0, 1u << 20, 1u << 20, 0));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaFieldOverflow);
  }
  SECTION("stride 2^20") {
    const auto f = trap_request(m, get_request(x, 0, 64, 16, 1u << 20));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaFieldOverflow);
    CHECK_THAT(f->detail(), Catch::Contains("stride = 1048576"));
  }
}
