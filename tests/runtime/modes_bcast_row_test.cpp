// BCAST and ROW gets, byte for byte: BCAST fills the same ldm range of every core whose row is in the mask (full
// and partial masks; rows outside the mask, the issuer included, stay untouched), ROW fills only the issuer's row.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "support/dma_requests.hpp"

using namespace ldmsim;

namespace {

constexpr std::size_t kBuf = 256;
constexpr std::byte kFill{0xEE};

/// `rows` x `cols` cores in one group.
Arch grid(std::uint32_t rows, std::uint32_t cols) {
  Arch a = Arch::preset("tiny");
  a.rows = rows;
  a.cols = cols;
  return Arch::from_json(a.to_json(), "test");
}

std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 13 + 5) & 0xFF);
  return v;
}

/// Every core fills a kBuf-byte ldm buffer with kFill; after a barrier, core `issuer` runs `issue` (which must
/// wait); after a second barrier every core snapshots its buffer. Returns the snapshots by core id.
template <typename Issue>
std::vector<std::vector<std::byte>> run(Machine& m, int issuer, Issue issue) {
  std::vector<std::vector<std::byte>> snaps(m.arch().cores_per_group(), std::vector<std::byte>(kBuf));
  m.launch(LaunchSpec{.name = "modes"}, [&snaps, issuer, issue](Core& core) {
     const LdmAddr at = core.ldm().alloc_bytes(kBuf);
     std::memset(core.ldm().bytes(at), 0xEE, kBuf);
     core.barrier();
     if (core.id() == issuer) issue(core, at);
     core.barrier();
     std::memcpy(snaps[static_cast<std::size_t>(core.id())].data(), core.ldm().bytes(at), kBuf);
   }).join();
  return snaps;
}

DmaRequest get(DmaMode mode, DeviceAddr main, std::uint64_t ldm, std::uint64_t length, std::uint32_t mask = ~0u) {
  DmaRequest r = testing::dma_request(DmaOp::kGet, main, ldm, length, 0, 0, "dma");
  r.mode = mode;
  r.row_mask = mask;
  return r;
}

/// The expected buffer of a receiving core: the data at [off, off + len), kFill elsewhere.
std::vector<std::byte> received(const std::vector<std::byte>& data, std::size_t off, std::size_t len) {
  std::vector<std::byte> v(kBuf, kFill);
  std::memcpy(v.data() + off, data.data(), len);
  return v;
}

}  // namespace

TEST_CASE("a BCAST get with the full mask fills the same ldm range of every core", "[modes]") {
  Machine m{Arch::preset("tiny")};
  const auto data = pattern(128);
  const DeviceAddr x = m.allocate_bytes(128);
  m.write_bytes(x, data);
  const auto snaps = run(m, 3, [x](Core& core, LdmAddr at) { core.dma(get(DmaMode::kBcast, x, at + 64, 128)).wait(); });
  for (std::size_t c = 0; c < 4; ++c) {
    INFO("core " << c);
    CHECK(snaps[c] == received(data, 64, 128));
  }
  // One request, counted once, on the issuer.
  const RunStats s = m.stats();
  CHECK(s.dma_requests() == 1);
  CHECK(s.groups[0].cores[3].dma_get_bytes == 128);
  std::vector<DmaEvent> events;
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 1);
  CHECK(events[0].mode == DmaMode::kBcast);
  CHECK(events[0].core == 3);
}

TEST_CASE("a BCAST get with a partial mask fills only the masked rows", "[modes]") {
  Machine m{grid(4, 2)};  // rows 0..3, cores row*2 + col
  const auto data = pattern(96);
  const DeviceAddr x = m.allocate_bytes(96);
  m.write_bytes(x, data);
  SECTION("rows 0 and 2, issued from row 1 (the issuer itself is not in the mask)") {
    const auto snaps =
        run(m, 2, [x](Core& core, LdmAddr at) { core.dma(get(DmaMode::kBcast, x, at + 4, 96, 0b0101)).wait(); });
    for (std::size_t c = 0; c < 8; ++c) {
      INFO("core " << c);
      const std::size_t row = c / 2;
      CHECK(snaps[c] == (row == 0 || row == 2 ? received(data, 4, 96) : std::vector<std::byte>(kBuf, kFill)));
    }
  }
  SECTION("row 3 only, through the typed API") {
    const auto snaps = run(m, 0, [x](Core& core, LdmAddr at) {
      LdmSpan<std::byte> dst(core.ldm().bytes(at), at, 96);
      core.bcast_get(dst, DevicePtr<const std::byte>(x), 0b1000).wait();
    });
    for (std::size_t c = 0; c < 8; ++c) {
      INFO("core " << c);
      CHECK(snaps[c] == (c / 2 == 3 ? received(data, 0, 96) : std::vector<std::byte>(kBuf, kFill)));
    }
  }
  SECTION("mask bits beyond the group's rows are ignored") {
    const auto snaps =
        run(m, 7, [x](Core& core, LdmAddr at) { core.dma(get(DmaMode::kBcast, x, at, 96, 0xFFFF'FFF2u)).wait(); });
    for (std::size_t c = 0; c < 8; ++c) {
      INFO("core " << c);
      CHECK(snaps[c] == (c / 2 == 1 ? received(data, 0, 96) : std::vector<std::byte>(kBuf, kFill)));
    }
  }
}

TEST_CASE("a strided BCAST get lands packed in every receiving core", "[modes]") {
  Machine m{grid(2, 2)};
  const auto data = pattern(256);
  const DeviceAddr x = m.allocate_bytes(256);
  m.write_bytes(x, data);
  const auto snaps = run(m, 1, [x](Core& core, LdmAddr at) {
    DmaRequest r = get(DmaMode::kBcast, x, at, 32);  // 4 blocks of 8 at 0, 32, 64, 96
    r.bsize = 8;
    r.stride = 24;
    core.dma(r).wait();
  });
  std::vector<std::byte> expected(kBuf, kFill);
  for (std::size_t b = 0; b < 4; ++b) std::memcpy(expected.data() + b * 8, data.data() + b * 32, 8);
  for (std::size_t c = 0; c < 4; ++c) {
    INFO("core " << c);
    CHECK(snaps[c] == expected);
  }
}

TEST_CASE("a ROW get fills only the issuing core's row", "[modes]") {
  Machine m{grid(4, 2)};
  const auto data = pattern(64);
  const DeviceAddr x = m.allocate_bytes(64);
  m.write_bytes(x, data);
  const int issuer = GENERATE(0, 5, 6);
  const auto snaps = run(m, issuer, [x](Core& core, LdmAddr at) {
    LdmSpan<std::byte> dst(core.ldm().bytes(at + 32), at + 32, 64);
    core.row_get(dst, DevicePtr<const std::byte>(x)).wait();
  });
  for (std::size_t c = 0; c < 8; ++c) {
    INFO("issuer " << issuer << ", core " << c);
    const bool same_row = static_cast<int>(c / 2) == issuer / 2;
    CHECK(snaps[c] == (same_row ? received(data, 32, 64) : std::vector<std::byte>(kBuf, kFill)));
  }
}
