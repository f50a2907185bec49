// DeferredCopies on its own: one entry per get names its receivers in a mask; a read makes only the reader's copy,
// a write over a receiver's range drops what it covers wholly and makes what it covers in part, a write over the
// source's range makes every copy still owed from it, and a launch's end drops everything unmade.
#include "ldmsim/dma/deferred_copies.hpp"

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace ldmsim;

namespace {

constexpr std::uint64_t kStore = 256;
constexpr std::size_t kCores = 8;

std::uint64_t bit(int core) {
  return std::uint64_t{1} << core;
}

/// Eight 256-byte stores; core c's bytes start as c * 16 (so a copy from core 0 is told apart by its value).
struct Stores {
  std::vector<std::byte> bytes = std::vector<std::byte>(kStore * kCores);
  DeferredCopies copies{bytes.data(), kStore, kCores};
  Stores() {
    for (std::size_t c = 0; c < kCores; ++c) std::memset(at(static_cast<int>(c), 0), static_cast<int>(c * 16), kStore);
  }
  std::byte* at(int core, std::uint64_t offset) {
    return bytes.data() + static_cast<std::size_t>(core) * kStore + offset;
  }
  int value(int core, std::uint64_t offset) { return std::to_integer<int>(*at(core, offset)); }
  /// The source's range [begin, end) gets `value` (what a get would land), and `receivers` are owed it.
  void land(int source, std::uint64_t receivers, std::uint64_t begin, std::uint64_t end, int value) {
    copies.before_write(receivers | bit(source), begin, end);
    std::memset(at(source, begin), value, end - begin);
    copies.owe(receivers, source, begin, end);
  }
};

}  // namespace

TEST_CASE("a read makes the reader's copy only, once", "[dma][on-read]") {
  Stores s;
  s.land(0, bit(1) | bit(2) | bit(3), 32, 64, 0xA5);
  CHECK_FALSE(s.copies.empty());
  s.copies.before_read(2, 40, 48);  // any overlap makes the whole owed range
  CHECK(s.value(2, 32) == 0xA5);
  CHECK(s.value(2, 63) == 0xA5);
  CHECK(s.value(2, 64) == 2 * 16);
  CHECK(s.value(1, 32) == 1 * 16);  // not read yet: still the store's own bytes
  CHECK(s.value(3, 32) == 3 * 16);
  std::memset(s.at(2, 32), 0x11, 32);  // the reader's own write after its copy
  s.copies.before_read(2, 32, 64);     // nothing owed any more
  CHECK(s.value(2, 32) == 0x11);
  s.copies.before_read(1, 0, 33);
  s.copies.before_read(3, 63, 64);
  CHECK(s.value(1, 32) == 0xA5);
  CHECK(s.value(3, 32) == 0xA5);
  CHECK(s.copies.empty());
}

TEST_CASE("a read outside an owed range or by a core not owed it makes nothing", "[dma][on-read]") {
  Stores s;
  s.land(0, bit(1), 32, 64, 0xA5);
  s.copies.before_read(1, 0, 32);   // ends where the owed range begins
  s.copies.before_read(1, 64, 96);  // begins where it ends
  s.copies.before_read(2, 32, 64);  // core 2 is owed nothing
  CHECK(s.value(1, 32) == 1 * 16);
  CHECK(s.value(2, 32) == 2 * 16);
  CHECK_FALSE(s.copies.empty());
}

TEST_CASE("writing over a receiver's range drops what it covers and makes what it covers in part", "[dma][on-read]") {
  Stores s;
  s.land(0, bit(1) | bit(2), 32, 64, 0xA5);
  s.land(0, bit(1) | bit(2), 96, 128, 0x5A);
  s.copies.before_write(bit(1), 32, 64);  // wholly covered: dropped for core 1, core 2 still owed
  CHECK(s.value(1, 32) == 1 * 16);
  s.copies.before_write(bit(1), 100, 200);  // partly covered: made first, then written over in part
  CHECK(s.value(1, 96) == 0x5A);
  CHECK(s.value(1, 127) == 0x5A);
  std::memset(s.at(0, 32), 0x77, 32);  // the source changes without telling (not what a kernel can do):
  s.copies.before_read(1, 32, 64);     // core 1 was released from this range, so it keeps its own bytes
  CHECK(s.value(1, 32) == 1 * 16);
  s.copies.before_read(2, 0, kStore);  // core 2 still takes both ranges from the source
  CHECK(s.value(2, 32) == 0x77);
  CHECK(s.value(2, 96) == 0x5A);
  CHECK(s.copies.empty());
}

TEST_CASE("writing over the source's range makes every copy still owed from it first", "[dma][on-read]") {
  Stores s;
  s.land(0, bit(1) | bit(2) | bit(5), 32, 64, 0xA5);
  s.copies.before_read(1, 32, 64);
  s.land(0, bit(3), 48, 80, 0x3C);  // overlaps the first range in the source: cores 2 and 5 get 0xA5 now
  CHECK(s.value(2, 32) == 0xA5);
  CHECK(s.value(2, 63) == 0xA5);
  CHECK(s.value(5, 63) == 0xA5);
  CHECK(s.value(3, 48) == 3 * 16);           // the new get is owed, not made
  s.copies.before_write(bit(0), 0, kStore);  // the source freed: core 3's copy made from it first
  CHECK(s.value(3, 48) == 0x3C);
  CHECK(s.value(3, 79) == 0x3C);
  CHECK(s.copies.empty());
}

TEST_CASE("a core owed copies from two sources gets each from its own", "[dma][on-read]") {
  Stores s;
  s.land(0, bit(7), 0, 16, 0x10);
  s.land(4, bit(7) | bit(5), 16, 32, 0x40);
  s.copies.before_read(7, 0, 32);
  CHECK(s.value(7, 0) == 0x10);
  CHECK(s.value(7, 16) == 0x40);
  CHECK(s.value(5, 16) == 5 * 16);
  s.copies.drop(0, kStore);  // a launch's end: core 5's copy dropped unmade
  CHECK(s.copies.empty());
  CHECK(s.value(5, 16) == 5 * 16);
}

TEST_CASE("a source is never owed its own copy, and an empty range owes nothing", "[dma][on-read]") {
  Stores s;
  s.copies.owe(bit(0), 0, 0, 16);
  s.copies.owe(bit(1), 0, 16, 16);
  CHECK(s.copies.empty());
}

TEST_CASE("groups of more than 64 cores do not defer", "[dma][on-read]") {
  std::vector<std::byte> bytes(65 * 16);
  CHECK_FALSE(DeferredCopies(bytes.data(), 16, 65).can_defer());
  CHECK(DeferredCopies(bytes.data(), 16, 64).can_defer());
}

TEST_CASE("a range wholly owed from one source can be read there", "[dma][on-read]") {
  Stores s;
  s.land(0, bit(1) | bit(2), 0, 16, 0x10);
  s.land(0, bit(1), 16, 32, 0x20);  // adjacent to the first, from the same source
  s.land(4, bit(1), 32, 48, 0x40);
  CHECK(s.copies.sole_source(1, 0, 32) == 0);  // across two entries
  CHECK(s.copies.sole_source(1, 8, 24) == 0);
  CHECK(s.copies.sole_source(2, 0, 16) == 0);
  CHECK(s.copies.sole_source(2, 0, 17) == -1);   // byte 16 is core 2's own
  CHECK(s.copies.sole_source(1, 24, 40) == -1);  // two sources
  CHECK(s.copies.sole_source(1, 32, 48) == 4);
  CHECK(s.copies.sole_source(3, 0, 16) == -1);   // owed nothing
  CHECK(s.copies.sole_source(1, 40, 40) == -1);  // an empty range reads nothing
  s.copies.before_read(1, 0, 16);
  CHECK(s.copies.sole_source(1, 0, 16) == -1);  // made: core 1 reads its own copy now
  CHECK(s.copies.sole_source(1, 16, 32) == 0);
}

TEST_CASE("settling some of a source's many ranges keeps the others owed in order", "[dma][on-read]") {
  Stores s;
  // Sixteen 16-byte ranges of core 0, every one owed to core 1, the odd ones to core 2 too.
  for (int r = 0; r < 16; ++r) {
    const auto begin = static_cast<std::uint64_t>(r) * 16;
    s.land(0, bit(1) | (r % 2 == 1 ? bit(2) : 0), begin, begin + 16, 0x80 + r);
  }
  s.copies.before_write(bit(1), 64, 192);  // core 1 released from ranges 4-11 (no copy made)
  s.copies.before_read(2, 0, kStore);      // core 2 takes its eight
  for (int r = 1; r < 16; r += 2) CHECK(s.value(2, static_cast<std::uint64_t>(r) * 16) == 0x80 + r);
  for (int r = 4; r < 12; ++r) {
    CHECK(s.value(1, static_cast<std::uint64_t>(r) * 16) == 1 * 16);
    CHECK(s.copies.sole_source(1, static_cast<std::uint64_t>(r) * 16, static_cast<std::uint64_t>(r + 1) * 16) == -1);
  }
  CHECK(s.copies.sole_source(1, 0, 64) == 0);  // ranges 0-3 and 12-15 still owed, found across entries
  CHECK(s.copies.sole_source(1, 192, kStore) == 0);
  s.copies.before_read(1, 40, 200);  // ranges 2, 3 and 12 made
  CHECK(s.value(1, 32) == 0x82);
  CHECK(s.value(1, 48) == 0x83);
  CHECK(s.value(1, 192) == 0x8C);
  CHECK(s.value(1, 208) == 1 * 16);
  CHECK(s.copies.sole_source(1, 0, 32) == 0);
  CHECK(s.copies.sole_source(1, 208, kStore) == 0);
  s.copies.drop(0, kStore);
  CHECK(s.copies.empty());
  CHECK(s.value(1, 0) == 1 * 16);
}
