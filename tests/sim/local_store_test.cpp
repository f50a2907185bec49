// The local-store (ldm) allocator: alignment, first fit into holes, free and reset, the high-water mark and peak
// extent, exact capacity boundaries, and the shortfall numbers used by the ldm-overflow fault.
#include "ldmsim/sim/local_store.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

using namespace ldmsim;

TEST_CASE("allocations are aligned to their alignment", "[ldm]") {
  LdmAllocator a(1024);
  CHECK(a.allocate(3, 1) == LdmAddr{0});
  CHECK(a.allocate(4, 4) == LdmAddr{4});    // 3 rounded up to 4
  CHECK(a.allocate(8, 64) == LdmAddr{64});  // 8 rounded up to 64
  CHECK(a.allocate(1, 1) == LdmAddr{3});    // the one-byte hole [3, 4) fits exactly
  CHECK(a.allocate(2, 2) == LdmAddr{8});    // the hole [8, 64) is used before the end
  CHECK(a.allocate(4, 32) == LdmAddr{32});
  CHECK(a.used() == 3 + 4 + 8 + 1 + 2 + 4);
  SECTION("invalid requests are refused") {
    CHECK_FALSE(a.allocate(0, 4));
    CHECK_FALSE(a.allocate(4, 0));
    CHECK_FALSE(a.allocate(4, 3));
    CHECK_FALSE(a.allocate(4, 12));
  }
}

TEST_CASE("first fit: the lowest hole that holds the request wins", "[ldm]") {
  LdmAllocator a(1000);
  REQUIRE(a.allocate(100, 4) == LdmAddr{0});
  REQUIRE(a.allocate(100, 4) == LdmAddr{100});
  REQUIRE(a.allocate(100, 4) == LdmAddr{200});
  REQUIRE(a.free(100));
  CHECK(a.allocate(50, 4) == LdmAddr{100});  // the freed slot
  CHECK(a.allocate(48, 4) == LdmAddr{152});  // exactly the rest of it: [152, 200)
  CHECK(a.allocate(4, 4) == LdmAddr{300});   // nothing left below 300
  REQUIRE(a.free(0));
  CHECK(a.allocate(101, 4) == LdmAddr{304});  // the 100-byte hole at 0 is one byte too small
  CHECK(a.allocate(100, 4) == LdmAddr{0});
}

TEST_CASE("the whole capacity can be allocated and not a byte more", "[ldm]") {
  LdmAllocator a(16384);
  CHECK_FALSE(a.allocate(16385, 4));
  const auto all = a.allocate(16384, 4);
  REQUIRE(all);
  CHECK(*all == 0);
  CHECK_FALSE(a.allocate(4, 4));
  CHECK(a.used() == 16384);
  SECTION("the last bytes after a smaller block") {
    LdmAllocator b(256);
    REQUIRE(b.allocate(200, 4) == LdmAddr{0});
    CHECK_FALSE(b.allocate(57, 4));
    CHECK(b.allocate(56, 4) == LdmAddr{200});
  }
  SECTION("alignment padding counts against the capacity") {
    LdmAllocator b(256);
    REQUIRE(b.allocate(4, 4) == LdmAddr{0});
    CHECK_FALSE(b.allocate(250, 8));  // would start at 8 and end at 258
    CHECK(b.allocate(248, 8) == LdmAddr{8});
  }
}

TEST_CASE("free releases one allocation by its offset, bad offsets are refused", "[ldm]") {
  LdmAllocator a(1024);
  const auto x = a.allocate(64, 32);
  const auto y = a.allocate(64, 32);
  REQUIRE(x);
  REQUIRE(y);
  CHECK_FALSE(a.free(*x + 4));  // inside an allocation, not its start
  CHECK_FALSE(a.free(512));     // never allocated
  CHECK(a.free(*x));
  CHECK_FALSE(a.free(*x));  // twice
  CHECK(a.used() == 64);
  CHECK(a.free(*y));
  CHECK(a.used() == 0);
}

TEST_CASE("reset frees everything and keeps the high-water mark", "[ldm]") {
  LdmAllocator a(4096);
  REQUIRE(a.allocate(1000, 4));
  REQUIRE(a.allocate(2000, 4));
  CHECK(a.high_water() == 3000);
  a.reset();
  CHECK(a.used() == 0);
  CHECK(a.high_water() == 3000);
  CHECK(a.peak_extent() == 3000);
  CHECK(a.allocate(4096, 4) == LdmAddr{0});
  CHECK(a.high_water() == 4096);
}

TEST_CASE("high water counts bytes in use, peak extent counts the highest byte handed out", "[ldm]") {
  LdmAllocator a(4096);
  const auto x = a.allocate(1000, 4);  // [0, 1000)
  const auto y = a.allocate(500, 4);   // [1000, 1500)
  REQUIRE(x);
  REQUIRE(y);
  CHECK(a.high_water() == 1500);
  REQUIRE(a.free(*x));
  const auto z = a.allocate(600, 4);  // reuses [0, 600): in use 1100, below the mark
  REQUIRE(z);
  CHECK(*z == 0);
  CHECK(a.used() == 1100);
  CHECK(a.high_water() == 1500);
  CHECK(a.peak_extent() == 1500);
  const auto w = a.allocate(8, 1024);  // [2048, 2056): alignment moves the extent
  REQUIRE(w);
  CHECK(*w == 2048);
  CHECK(a.high_water() == 1500);
  CHECK(a.peak_extent() == 2056);
  REQUIRE(a.allocate(500, 4));  // [1500, 2000): 1608 in use
  CHECK(a.high_water() == 1608);
}

TEST_CASE("shortfall reports requested, free, largest free block and high water", "[ldm]") {
  LdmAllocator a(1000);
  REQUIRE(a.allocate(100, 4) == LdmAddr{0});
  REQUIRE(a.allocate(200, 4) == LdmAddr{100});
  REQUIRE(a.allocate(300, 4) == LdmAddr{300});
  REQUIRE(a.free(100));  // holes: [100, 300) and [600, 1000)
  CHECK_FALSE(a.allocate(500, 4));
  const LdmShortfall s = a.shortfall(500);
  CHECK(s.requested == 500);
  CHECK(s.free_bytes == 600);
  CHECK(s.largest_free == 400);
  CHECK(s.high_water == 600);
  SECTION("with everything free") {
    a.reset();
    const LdmShortfall e = a.shortfall(2000);
    CHECK(e.free_bytes == 1000);
    CHECK(e.largest_free == 1000);
    CHECK(e.high_water == 600);
  }
  SECTION("with the store full") {
    REQUIRE(a.allocate(200, 4) == LdmAddr{100});
    REQUIRE(a.allocate(400, 4) == LdmAddr{600});
    const LdmShortfall f = a.shortfall(4);
    CHECK(f.free_bytes == 0);
    CHECK(f.largest_free == 0);
    CHECK(f.high_water == 1000);
  }
  SECTION("the largest hole is in the middle") {
    LdmAllocator b(1000);
    REQUIRE(b.allocate(100, 4));
    const auto mid = b.allocate(500, 4);
    REQUIRE(b.allocate(350, 4));
    REQUIRE(b.free(*mid));
    CHECK(b.shortfall(600).largest_free == 500);
    CHECK(b.shortfall(600).free_bytes == 550);
  }
}

TEST_CASE("an allocator hands its block storage to the next one, which allocates as a fresh one would", "[ldm]") {
  LdmAllocator first(4096);
  for (int i = 0; i < 20; ++i) REQUIRE(first.allocate(64, 32));
  std::vector<LdmAllocator::Block> storage = first.take_storage();
  CHECK(storage.empty());
  CHECK(storage.capacity() >= 20);
  CHECK(first.used() == 0);  // freed, as by reset
  CHECK(first.high_water() == 20 * 64);
  CHECK(first.allocate(128, 4) == LdmAddr{0});

  const auto* kept = storage.data();
  LdmAllocator next(1024);
  next.adopt_storage(std::move(storage));
  CHECK(next.used() == 0);
  CHECK(next.high_water() == 0);
  for (int i = 0; i < 16; ++i) CHECK(next.allocate(64, 32) == LdmAddr{static_cast<std::uint32_t>(64 * i)});
  CHECK_FALSE(next.allocate(4, 4));           // full, as a fresh allocator of 1024 bytes would be
  CHECK(next.take_storage().data() == kept);  // the same storage, not grown anew
  SECTION("an allocator that holds blocks already keeps them") {
    LdmAllocator busy(256);
    REQUIRE(busy.allocate(100, 4) == LdmAddr{0});
    std::vector<LdmAllocator::Block> other(4, LdmAllocator::Block{LdmAddr{8}, 8});
    busy.adopt_storage(std::move(other));
    CHECK(busy.used() == 100);
    CHECK(busy.size_of(0) == 100);
    CHECK(busy.allocate(100, 4) == LdmAddr{100});
  }
}
