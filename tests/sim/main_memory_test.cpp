// Device main memory: deterministic first-fit addresses per core-group window, alignment, reuse and coalescing after
// free, freed bytes reading back as zero, find_region boundaries, lazy commit of huge nodes, concurrent writes, and
// bytes lent to a region (read in place until its first write copies them), replicated regions, and allocations the
// caller overwrites (not cleared first).
#include "ldmsim/sim/main_memory.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

std::vector<std::byte> bytes_of(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xFF);
  return v;
}

/// Whether the `n` bytes at `at` read as zero.
bool reads_zero(const MainMemory& mem, DeviceAddr at, std::size_t n) {
  std::vector<std::byte> out(n, std::byte{0xFF});
  mem.read(at, out);
  return out == std::vector<std::byte>(n, std::byte{0});
}

}  // namespace

TEST_CASE("addresses are deterministic: first fit from each core group's window", "[memory]") {
  MainMemory mem(2, 64 * kMiB);
  const DeviceAddr a = mem.allocate(100);
  const DeviceAddr b = mem.allocate(100);
  const DeviceAddr c = mem.allocate(100, 256, 1);
  CHECK(a == MainMemory::kBase);
  CHECK(b == MainMemory::kBase + 256);  // default alignment 256
  CHECK(c == MainMemory::kBase + 64 * kMiB);
  // A second memory with the same history hands out the same addresses.
  MainMemory again(2, 64 * kMiB);
  CHECK(again.allocate(100) == a);
  CHECK(again.allocate(100) == b);
  CHECK(again.allocate(100, 256, 1) == c);
  const auto regions = mem.regions();
  REQUIRE(regions.size() == 3);
  CHECK(regions[2].cg == 1);
  CHECK(mem.allocated_bytes() == 300);
}

TEST_CASE("allocations honour their alignment", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr first = mem.allocate(4, 4);
  CHECK(first == MainMemory::kBase);
  CHECK(mem.allocate(4, 4) == first + 4);  // alignment 4 packs tightly
  const DeviceAddr big = mem.allocate(8, 4096);
  CHECK(big % 4096 == 0);
  CHECK(big == MainMemory::kBase + 4096);
  CHECK(mem.allocate(4, 4) == first + 8);  // the hole before `big` is reused first
  const DeviceAddr huge = mem.allocate(1, 2 * kMiB);
  CHECK(huge % (2 * kMiB) == 0);
  SECTION("bad requests throw ConfigError") {
    CHECK_THROWS_AS(mem.allocate(0), ConfigError);
    CHECK_THROWS_AS(mem.allocate(4, 3), ConfigError);
    CHECK_THROWS_AS(mem.allocate(4, 2), ConfigError);  // below the 4-byte granularity
    CHECK_THROWS_AS(mem.allocate(4, 256, 1), ConfigError);
    CHECK_THROWS_AS(mem.allocate(4, 256, -1), ConfigError);
    CHECK_THROWS_AS(mem.allocate(65 * kMiB), ConfigError);
    CHECK_THROWS_AS(mem.free(first + 4 + 4 + 4), ConfigError);  // not a base
    CHECK_THROWS_AS(mem.free(first + 1), ConfigError);
  }
}

TEST_CASE("a window is filled to the last byte and no further", "[memory]") {
  MainMemory mem(2, 16 * kMiB);
  const DeviceAddr all = mem.allocate(16 * kMiB, 256, 0);
  CHECK(all == MainMemory::kBase);
  CHECK_THROWS_AS(mem.allocate(4, 4, 0), ConfigError);
  CHECK(mem.allocate(4, 4, 1) == MainMemory::kBase + 16 * kMiB);  // group 1's window is separate
}

TEST_CASE("freed space is reused first-fit and neighbouring holes coalesce", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr a = mem.allocate(1000);
  const DeviceAddr b = mem.allocate(1000);
  const DeviceAddr c = mem.allocate(1000);
  CHECK(b == a + 1024);
  CHECK(c == a + 2048);
  SECTION("reuse of a freed slot") {
    mem.free(b);
    CHECK(mem.allocate(500) == b);
    CHECK(mem.allocate(500) == b + 512);   // the rest of b's slot: [b + 500, a + 2048) holds 500 at b + 512
    CHECK(mem.allocate(500) == c + 1024);  // now the slot is full: after c
  }
  SECTION("a freed region merges with the gap before it") {
    mem.free(b);
    // The hole is [a + 1000, a + 2048): 1048 bytes; 1024 at alignment 256 fits at a + 1024.
    CHECK(mem.allocate(1024) == b);
  }
  SECTION("three frees in any order leave one hole") {
    mem.free(c);
    mem.free(a);
    mem.free(b);
    CHECK(mem.regions().empty());
    CHECK(mem.allocated_bytes() == 0);
    CHECK(mem.allocate(64 * kMiB) == a);  // only possible if every hole merged back into the whole window
  }
  SECTION("freeing the middle then the first merges forward") {
    mem.free(b);
    mem.free(a);
    CHECK(mem.allocate(2048, 4) == a);
  }
}

TEST_CASE("freed bytes read back as zero when reallocated", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  SECTION("a small region (partial chunk)") {
    const DeviceAddr a = mem.allocate(4096);
    mem.write(a, bytes_of(4096, 1));
    mem.free(a);
    const DeviceAddr again = mem.allocate(4096);
    REQUIRE(again == a);
    std::vector<std::byte> out(4096, std::byte{0xFF});
    mem.read(again, out);
    CHECK(out == std::vector<std::byte>(4096, std::byte{0}));
  }
  SECTION("a region covering whole chunks and parts of others") {
    const DeviceAddr pad = mem.allocate(4096);
    const std::uint64_t n = 3 * MainMemory::kChunkBytes;
    const DeviceAddr a = mem.allocate(n, 4096);  // starts inside chunk 0: partial, 2 whole, partial
    const auto data = bytes_of(n, 7);
    mem.write(a, data);
    mem.write(pad, bytes_of(4096, 9));
    mem.free(a);
    const DeviceAddr again = mem.allocate(n, 4096);
    REQUIRE(again == a);
    std::vector<std::byte> out(n, std::byte{0xFF});
    mem.read(again, out);
    CHECK(out == std::vector<std::byte>(n, std::byte{0}));
    std::vector<std::byte> kept(4096);
    mem.read(pad, kept);
    CHECK(kept == bytes_of(4096, 9));  // the neighbour in the same chunk is untouched
  }
}

TEST_CASE("freed bytes are zero in every later allocation that reuses part of them", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const auto zeros = [&](DeviceAddr at, std::size_t n) { return reads_zero(mem, at, n); };
  const DeviceAddr x = mem.allocate(4096), y = mem.allocate(4096);
  REQUIRE(y == x + 4096);
  mem.write(x, bytes_of(8192, 3));  // both
  mem.free(x);
  mem.free(y);                              // two freed neighbours
  const DeviceAddr b = mem.allocate(1024);  // the start of the first
  REQUIRE(b == x);
  CHECK(zeros(b, 1024));
  mem.write(b, bytes_of(1024, 5));
  const DeviceAddr c = mem.allocate(5120);  // the rest of the first and the start of the second
  REQUIRE(c == x + 1024);
  CHECK(zeros(c, 5120));
  std::vector<std::byte> kept(1024);
  mem.read(b, kept);
  CHECK(kept == bytes_of(1024, 5));         // a live neighbour is never zeroed
  const DeviceAddr d = mem.allocate(2048);  // the end of the second
  REQUIRE(d == x + 6144);
  CHECK(zeros(d, 2048));
}

TEST_CASE("an allocation the caller overwrites is not cleared, and its freed bytes are cleared for the next",
          "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr a = mem.allocate(8192);
  const std::vector<std::byte> held = bytes_of(8192, 4);
  mem.write(a, held);
  mem.free(a);
  // Cleared, the bytes would read as zeros: left as they were, the caller's write is the only one.
  const DeviceAddr b = mem.allocate(4096, 256, 0, "overwritten", MainMemory::Fill::kOverwritten);
  REQUIRE(b == a);
  std::vector<std::byte> left(4096);
  mem.read(b, left);
  CHECK(left == std::vector<std::byte>(held.begin(), held.begin() + 4096));
  // The rest of the hole is still cleared when a zeroed allocation takes it.
  const DeviceAddr c = mem.allocate(4096);
  REQUIRE(c == a + 4096);
  CHECK(reads_zero(mem, c, 4096));
  // Freed again, the overwritten region's bytes read as zero in the next zeroed allocation.
  mem.write(b, bytes_of(4096, 8));
  mem.free(b);
  const DeviceAddr d = mem.allocate(4096);
  REQUIRE(d == a);
  CHECK(reads_zero(mem, d, 4096));
}

TEST_CASE("a freed hole's padding before an aligned allocation is zero when allocated later", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  mem.allocate(4096, 4096);  // so the next region starts off an 8 KiB boundary
  const DeviceAddr a = mem.allocate(8192, 4096);
  mem.write(a, bytes_of(8192, 6));
  mem.free(a);
  const DeviceAddr aligned = mem.allocate(1024, 8192);  // past the hole's start: its first 4 KiB stay free
  REQUIRE(aligned > a);
  const DeviceAddr padding = mem.allocate(aligned - a, 4);
  REQUIRE(padding == a);
  std::vector<std::byte> out(aligned - a, std::byte{0xFF});
  mem.read(padding, out);
  CHECK(out == std::vector<std::byte>(aligned - a, std::byte{0}));
}

namespace {
/// The first index where `got` differs from `expected` (or from zeros when `expected` is empty), -1 when none:
/// a failure names one byte instead of printing megabytes.
std::int64_t first_difference(const std::vector<std::byte>& got, const std::vector<std::byte>& expected = {}) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != (expected.empty() ? std::byte{0} : expected[i])) return static_cast<std::int64_t>(i);
  }
  return -1;
}
}  // namespace

TEST_CASE("random allocations, writes and frees match a reference model", "[memory]") {
  constexpr std::uint64_t kChunk = MainMemory::kChunkBytes;
  for (unsigned seed = 0; seed < 24; ++seed) {
    std::mt19937_64 rng(seed);
    const auto below = [&rng](std::uint64_t n) { return rng() % n; };
    const std::uint32_t groups = 1 + static_cast<std::uint32_t>(below(2));
    MainMemory mem(groups, (3 + below(3)) * kChunk + 4096 * below(8));
    std::map<DeviceAddr, std::vector<std::byte>> live;  // what each live region must hold
    const auto size = [&]() -> std::uint64_t {
      switch (below(5)) {
        case 0:
          return 1 + below(64);
        case 1:
          return 1 + below(8192);
        case 2:
          return 1 + below(kChunk / 2);
        case 3:
          return kChunk - 64 + below(128);
        default:
          return kChunk + below(kChunk);
      }
    };
    for (int step = 0; step < 300; ++step) {
      INFO("seed " << seed << ", step " << step);
      const std::uint64_t op = below(10);
      if (op < 4 || live.empty()) {
        const std::uint64_t bytes = size(), alignment = std::uint64_t{4} << below(12);
        DeviceAddr at = 0;
        try {
          at = mem.allocate(bytes, alignment, static_cast<int>(below(groups)));
        } catch (const ConfigError&) {
          continue;  // full
        }
        std::vector<std::byte> got(bytes, std::byte{0xAB});
        mem.read(at, got);
        REQUIRE(first_difference(got) == -1);  // fresh or reused: zero
        if (below(3) == 0) {                   // lent its contents instead of written
          auto lent = std::make_shared<std::vector<std::byte>>(bytes_of(bytes, static_cast<unsigned>(below(256))));
          mem.lend(at, lent, *lent);
          got = *lent;
        }
        live.emplace(at, std::move(got));
      } else if (op < 7) {
        auto it = std::next(live.begin(), static_cast<std::ptrdiff_t>(below(live.size())));
        const std::uint64_t from = below(it->second.size()), n = 1 + below(it->second.size() - from);
        const std::vector<std::byte> data(n, static_cast<std::byte>(1 + below(255)));
        mem.write(it->first + from, data);
        std::copy(data.begin(), data.end(), it->second.begin() + static_cast<std::ptrdiff_t>(from));
      } else {
        auto it = std::next(live.begin(), static_cast<std::ptrdiff_t>(below(live.size())));
        mem.free(it->first);
        live.erase(it);
      }
      if (step % 25 == 0) {
        for (const auto& [at, expected] : live) {
          std::vector<std::byte> got(expected.size());
          mem.read(at, got);
          REQUIRE(first_difference(got, expected) == -1);  // no neighbour's allocation or free touched it
        }
        // One read per window across all its live regions, lent or not: each region's bytes where they are (free
        // bytes between them are not compared: freed bytes are zeroed when allocated again, not before).
        std::map<std::uint64_t, std::vector<DeviceAddr>> by_window;
        for (const auto& [at, held] : live) by_window[MainMemory::window_of(at, mem.bytes_per_cg())].push_back(at);
        for (const auto& [window, bases] : by_window) {
          const DeviceAddr first = bases.front(), end = bases.back() + live.at(bases.back()).size();
          std::vector<std::byte> got(end - first);
          mem.read(first, got);
          for (const DeviceAddr at : bases) {
            const std::vector<std::byte>& held = live.at(at);
            const auto from = got.begin() + static_cast<std::ptrdiff_t>(at - first);
            REQUIRE(first_difference(std::vector<std::byte>(from, from + static_cast<std::ptrdiff_t>(held.size())),
                                     held) == -1);
          }
        }
      }
    }
  }
}

TEST_CASE("reads and writes cross chunk boundaries", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr a = mem.allocate(4 * kMiB);
  const DeviceAddr at = a + MainMemory::kChunkBytes - 100;
  const auto data = bytes_of(300, 3);
  mem.write(at, data);
  std::vector<std::byte> out(300);
  mem.read(at, out);
  CHECK(out == data);
  std::vector<std::byte> untouched(64, std::byte{0xFF});
  mem.read(a + 3 * kMiB, untouched);  // never written: zeros, without committing anything
  CHECK(untouched == std::vector<std::byte>(64, std::byte{0}));
  CHECK(mem.committed_bytes() == 2 * MainMemory::kChunkBytes);
}

TEST_CASE("find_region accepts exactly the ranges inside one live region", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr a = mem.allocate(100, 256, 0, "a");
  const DeviceAddr b = mem.allocate(256, 256, 0, "b");
  REQUIRE(b == a + 256);
  const Region* r = mem.find_region(a, 100);
  REQUIRE(r != nullptr);
  CHECK(r->base == a);
  CHECK(r->bytes == 100);
  CHECK(r->name == "a");
  CHECK(r->end() == a + 100);
  CHECK(mem.find_region(a + 99, 1) == r);
  CHECK(mem.find_region(a, 101) == nullptr);
  CHECK(mem.find_region(a + 100, 1) == nullptr);
  CHECK(mem.find_region(a - 1, 1) == nullptr);
  CHECK(mem.find_region(a - 1, 2) == nullptr);
  CHECK(mem.find_region(b - 1, 2) == nullptr);
  CHECK(mem.find_region(b, 256)->name == "b");
  CHECK(mem.find_region(b + 255, 1)->name == "b");
  CHECK(mem.find_region(b + 256, 1) == nullptr);
  CHECK(mem.find_region(b, 257) == nullptr);
  CHECK(mem.find_region(0, 4) == nullptr);
  CHECK(mem.find_region(a, std::uint64_t{1} << 63) == nullptr);
  SECTION("adjacent regions never combine") {
    const DeviceAddr c = mem.allocate(256, 256, 0, "c");
    REQUIRE(c == b + 256);
    CHECK(mem.find_region(b + 252, 8) == nullptr);
  }
  SECTION("nearest_region names a region for diagnostics") {
    CHECK(mem.nearest_region(a + 150)->name == "a");
    CHECK(mem.nearest_region(b + 1000)->name == "b");
    CHECK(mem.nearest_region(0)->name == "a");
    mem.free(a);
    mem.free(b);
    CHECK_FALSE(mem.nearest_region(a).has_value());
    CHECK(mem.find_region(a, 4) == nullptr);
  }
}

TEST_CASE("a 96 GiB node commits only the chunks that are touched", "[memory]") {
  MainMemory mem(6, 16 * kGiB);  // sw26010pro: 16 GiB per group x 6
  CHECK(mem.committed_bytes() == 0);
  std::vector<DeviceAddr> regions;
  for (int cg = 0; cg < 4; ++cg) regions.push_back(mem.allocate(16 * kGiB, 256, cg));  // 64 GiB in regions
  CHECK(mem.allocated_bytes() == 64 * kGiB);
  CHECK(mem.committed_bytes() == 0);
  const auto data = bytes_of(64, 5);
  for (DeviceAddr r : regions) {
    mem.write(r, data);
    mem.write(r + 16 * kGiB - 64, data);  // the last bytes of each region
  }
  CHECK(mem.committed_bytes() == 8 * MainMemory::kChunkBytes);
  std::vector<std::byte> out(64);
  mem.read(regions[3] + 16 * kGiB - 64, out);
  CHECK(out == data);
  mem.read(regions[2] + 8 * kGiB, out);
  CHECK(out == std::vector<std::byte>(64, std::byte{0}));
  CHECK(mem.committed_bytes() == 8 * MainMemory::kChunkBytes);  // reads commit nothing
}

TEST_CASE("threads writing to different places commit chunks concurrently without losing bytes", "[memory]") {
  MainMemory mem(4, 64 * kMiB);
  std::vector<DeviceAddr> windows;
  for (int cg = 0; cg < 4; ++cg) windows.push_back(mem.allocate(64 * kMiB, 256, cg));
  constexpr int kThreads = 4;
  constexpr std::uint64_t kChunks = 16;
  // Every thread writes its own 64-byte slot in each of the same fresh chunks (racing to commit each chunk), and
  // its own whole chunk in its own group's window.
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const auto slot = bytes_of(64, static_cast<unsigned>(t + 1));
      for (std::uint64_t c = 0; c < kChunks; ++c) {
        mem.write(windows[0] + c * MainMemory::kChunkBytes + static_cast<std::uint64_t>(t) * 64, slot);
      }
      mem.write(windows[static_cast<std::size_t>(t)] + 24 * MainMemory::kChunkBytes, bytes_of(4096, 77));
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    const auto slot = bytes_of(64, static_cast<unsigned>(t + 1));
    for (std::uint64_t c = 0; c < kChunks; ++c) {
      std::vector<std::byte> out(64);
      mem.read(windows[0] + c * MainMemory::kChunkBytes + static_cast<std::uint64_t>(t) * 64, out);
      INFO("thread " << t << ", chunk " << c);
      REQUIRE(out == slot);
    }
    std::vector<std::byte> own(4096);
    mem.read(windows[static_cast<std::size_t>(t)] + 24 * MainMemory::kChunkBytes, own);
    CHECK(own == bytes_of(4096, 77));
  }
  CHECK(mem.committed_bytes() == (kChunks + kThreads) * MainMemory::kChunkBytes);
}

TEST_CASE("prefault commits a range's chunks without changing a byte, and stops when told", "[memory]") {
  MainMemory mem(2, 64 * kMiB);
  const DeviceAddr a = mem.allocate(3 * MainMemory::kChunkBytes, 256, 0);
  const auto data = bytes_of(4096, 3);
  mem.write(a + MainMemory::kChunkBytes, data);  // the middle chunk holds data already
  CHECK(mem.committed_bytes() == MainMemory::kChunkBytes);
  std::atomic<bool> stop{true};
  mem.prefault(a, 3 * MainMemory::kChunkBytes, stop);
  CHECK(mem.committed_bytes() == MainMemory::kChunkBytes);  // stopped before anything
  stop = false;
  mem.prefault(a, 3 * MainMemory::kChunkBytes, stop);
  CHECK(mem.committed_bytes() == 3 * MainMemory::kChunkBytes);
  std::vector<std::byte> out(4096);
  mem.read(a + MainMemory::kChunkBytes, out);
  CHECK(out == data);
  mem.read(a, out);
  CHECK(out == std::vector<std::byte>(4096, std::byte{0}));
  // A range past the last chunk is clipped to the node, not an error.
  mem.prefault(MainMemory::kBase + 128 * kMiB - 4096, 1 * kGiB, stop);
  CHECK(mem.committed_bytes() == 4 * MainMemory::kChunkBytes);
}

TEST_CASE("lent bytes are read in place until the region's first write copies them", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr before = mem.allocate(100);
  const std::uint64_t bytes = 2 * MainMemory::kChunkBytes + 300;  // across chunk boundaries
  const DeviceAddr at = mem.allocate(bytes);
  const DeviceAddr after = mem.allocate(100);
  mem.write(before, bytes_of(100, 1));
  mem.write(after, bytes_of(100, 2));
  const std::uint64_t committed = mem.committed_bytes();
  auto lent = std::make_shared<std::vector<std::byte>>(bytes_of(bytes, 9));
  std::weak_ptr<std::vector<std::byte>> owner = lent;
  mem.lend(at, lent, *lent);
  const std::vector<std::byte> values = *lent;
  lent.reset();  // the memory keeps them alive
  CHECK(mem.lent_regions() == 1);
  std::vector<std::byte> got(bytes);
  mem.read(at, got);
  CHECK(got == values);
  std::vector<std::byte> piece(1000);
  mem.read(at + MainMemory::kChunkBytes - 500, piece);
  CHECK(std::equal(piece.begin(), piece.end(), values.begin() + MainMemory::kChunkBytes - 500));
  CHECK(mem.committed_bytes() == committed);  // nothing copied, nothing committed for it
  // A read from the region before through the one after: each region's bytes, zeros between them.
  std::vector<std::byte> across(after + 100 - before), expected(across.size());
  const auto place = [&](DeviceAddr a, const std::vector<std::byte>& v) {
    std::copy(v.begin(), v.end(), expected.begin() + static_cast<std::ptrdiff_t>(a - before));
  };
  place(before, bytes_of(100, 1));
  place(at, values);
  place(after, bytes_of(100, 2));
  mem.read(before, across);
  CHECK(first_difference(across, expected) == -1);

  mem.write(at + MainMemory::kChunkBytes + 7, bytes_of(3, 200));  // one write anywhere copies the whole region
  CHECK(mem.lent_regions() == 0);
  std::vector<std::byte> want = values;
  const auto changed = bytes_of(3, 200);
  std::copy(changed.begin(), changed.end(), want.begin() + static_cast<std::ptrdiff_t>(MainMemory::kChunkBytes) + 7);
  mem.read(at, got);
  CHECK(first_difference(got, want) == -1);
  CHECK(!owner.expired());  // held until the region is freed
  mem.free(at);
  CHECK(owner.expired());
  const DeviceAddr again = mem.allocate(bytes);
  CHECK(again == at);
  mem.read(again, got);
  CHECK(first_difference(got) == -1);  // a freed region's bytes, lent or copied, read as zero when reused
}

TEST_CASE("lent_bytes hands out a region's loan until a write copies it", "[memory]") {
  MainMemory mem(2, 64 * kMiB);
  const DeviceAddr at = mem.allocate(4096), plain = mem.allocate(4096);
  CHECK_FALSE(mem.lent_bytes(at).has_value());  // nothing lent yet
  auto lent = std::make_shared<std::vector<std::byte>>(bytes_of(4096, 5));
  mem.lend(at, lent, *lent);
  const auto loan = mem.lent_bytes(at);
  REQUIRE(loan.has_value());
  CHECK(loan->owner == lent);
  CHECK(loan->bytes.data() == lent->data());
  CHECK(loan->bytes.size() == 4096);
  CHECK_FALSE(mem.lent_bytes(at + 4).has_value());  // only at the region's base
  CHECK_FALSE(mem.lent_bytes(plain).has_value());
  // Lent on to a region in another group's memory, the same bytes serve both, and outlive the first region.
  const DeviceAddr copy = mem.allocate(4096, 256, 1);
  mem.lend(copy, loan->owner, loan->bytes);
  mem.free(at);
  CHECK_FALSE(mem.lent_bytes(at).has_value());
  std::vector<std::byte> got(4096);
  mem.read(copy, got);
  CHECK(got == *lent);
  mem.write(copy + 8, bytes_of(4, 7));  // a write copies the loan: it is no longer handed out
  CHECK_FALSE(mem.lent_bytes(copy).has_value());
  CHECK(*lent == bytes_of(4096, 5));  // never written through
}

TEST_CASE("a lent region freed before any write leaves nothing behind", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr at = mem.allocate(5000);
  auto lent = std::make_shared<std::vector<std::byte>>(bytes_of(5000, 4));
  mem.lend(at, lent, *lent);
  mem.free(at);
  CHECK(mem.lent_regions() == 0);
  const DeviceAddr again = mem.allocate(5000);
  std::vector<std::byte> got(5000, std::byte{1});
  mem.read(again, got);
  CHECK(first_difference(got) == -1);
  CHECK(mem.committed_bytes() == 0);
}

TEST_CASE("lend refuses bytes that do not fill one live region exactly", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const DeviceAddr at = mem.allocate(256);
  auto lent = std::make_shared<std::vector<std::byte>>(bytes_of(256, 4));
  CHECK_THROWS_AS(mem.lend(at, lent, std::span<const std::byte>(*lent).first(255)), std::logic_error);
  CHECK_THROWS_AS(mem.lend(at + 4, lent, std::span<const std::byte>(*lent).first(252)), std::logic_error);
  CHECK(mem.lent_regions() == 0);
}

TEST_CASE("threads reading a lent region while others write it see whole copies and lose no write", "[memory]") {
  MainMemory mem(2, 64 * kMiB);
  const std::uint64_t bytes = 3 * MainMemory::kChunkBytes;
  const DeviceAddr at = mem.allocate(bytes);
  auto lent = std::make_shared<std::vector<std::byte>>(bytes_of(bytes, 5));
  const std::vector<std::byte> values = *lent;
  mem.lend(at, lent, *lent);
  constexpr int kWriters = 3, kReaders = 3;
  std::atomic<int> bad_reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {  // each writes its own 64-byte slot of every chunk
      for (std::uint64_t c = 0; c < 3; ++c) {
        mem.write(at + c * MainMemory::kChunkBytes + static_cast<std::uint64_t>(t) * 64,
                  bytes_of(64, static_cast<unsigned>(100 + t)));
      }
    });
  }
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&] {  // bytes no writer touches read the lent values throughout
      std::vector<std::byte> got(4096);
      for (int round = 0; round < 200; ++round) {
        mem.read(at + MainMemory::kChunkBytes + 1024, got);
        if (!std::equal(got.begin(), got.end(), values.begin() + MainMemory::kChunkBytes + 1024)) ++bad_reads;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad_reads == 0);
  CHECK(mem.lent_regions() == 0);
  std::vector<std::byte> want = values, got(bytes);
  for (int t = 0; t < kWriters; ++t) {
    const auto slot = bytes_of(64, static_cast<unsigned>(100 + t));
    for (std::uint64_t c = 0; c < 3; ++c) {
      std::copy(
          slot.begin(), slot.end(),
          want.begin() + static_cast<std::ptrdiff_t>(c * MainMemory::kChunkBytes + static_cast<std::uint64_t>(t) * 64));
    }
  }
  mem.read(at, got);
  CHECK(first_difference(got, want) == -1);
}

TEST_CASE("lending again, or over written bytes, replaces the region's contents as a write would", "[memory]") {
  MainMemory mem(1, 64 * kMiB);
  const std::uint64_t bytes = 3000;
  const DeviceAddr at = mem.allocate(bytes);
  mem.write(at, bytes_of(bytes, 1));  // written before the loan: hidden by it
  auto first = std::make_shared<std::vector<std::byte>>(bytes_of(bytes, 2));
  auto second = std::make_shared<std::vector<std::byte>>(bytes_of(bytes, 3));
  mem.lend(at, first, *first);
  mem.lend(at, second, *second);  // the second loan replaces the first
  CHECK(mem.lent_regions() == 1);
  std::vector<std::byte> got(bytes);
  mem.read(at, got);
  CHECK(got == *second);
  mem.write(at + 10, std::span<const std::byte>());  // an empty write copies nothing
  CHECK(mem.lent_regions() == 1);
  mem.write(at + 10, bytes_of(4, 200));
  CHECK(mem.lent_regions() == 0);
  std::vector<std::byte> want = *second;
  const auto changed = bytes_of(4, 200);
  std::copy(changed.begin(), changed.end(), want.begin() + 10);
  mem.read(at, got);
  CHECK(got == want);           // neither the first loan's bytes nor the ones written before show through
  mem.lend(at, first, *first);  // a copied region lent again: its new contents
  mem.read(at, got);
  CHECK(got == *first);
}

TEST_CASE("a replicated region resolves to each group's copy until either is freed", "[memory][replica]") {
  MainMemory mem(3, 1ull << 24);
  const DeviceAddr base = mem.allocate(4096, 256, 0, "weights");
  const DeviceAddr copy1 = mem.allocate(4096, 256, 1, "weights"), copy2 = mem.allocate(4096, 256, 2, "weights");
  CHECK_FALSE(mem.has_replicas());
  CHECK_FALSE(mem.replica_of(base, 4096, 1).has_value());
  mem.add_replica(base, 1, copy1);
  REQUIRE(mem.has_replicas());
  CHECK(mem.replica_of(base + 100, 200, 1) == copy1 + 100);
  CHECK(mem.replica_of(base + 100, 200, 0) == base + 100);  // the region's own group, and a group without a copy
  CHECK(mem.replica_of(base + 100, 200, 2) == base + 100);
  CHECK_FALSE(mem.replica_of(base + 4000, 200, 1).has_value());  // not inside the region
  CHECK_FALSE(mem.replica_of(copy1, 16, 1).has_value());         // a copy is not itself replicated
  mem.add_replica(base, 2, copy2);
  CHECK(mem.replica_of(base, 4096, 2) == copy2);
  // A copy of another size, in another group's memory, or not a region's base is refused.
  const DeviceAddr small = mem.allocate(1024, 256, 1);
  CHECK_THROWS_AS(mem.add_replica(base, 1, small), std::logic_error);
  CHECK_THROWS_AS(mem.add_replica(base, 2, copy1), std::logic_error);
  CHECK_THROWS_AS(mem.add_replica(base + 4, 1, copy1), std::logic_error);
  // Freeing a copy ends the replication (its address may be reused); so does freeing the region.
  mem.free(copy2);
  CHECK_FALSE(mem.has_replicas());
  CHECK(mem.replica_of(base, 4096, 1) == std::nullopt);
  mem.add_replica(base, 1, copy1);
  mem.free(base);
  CHECK_FALSE(mem.has_replicas());
}
