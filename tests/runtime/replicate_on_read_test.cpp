// BCAST and ROW gets whose receivers get their copies on read (DmaRequest::replicate_on_read): every byte a
// receiver can see once it readies its buffer, or that a request reads from it, is the eager copy's; overwriting or
// freeing the source first, and overwriting part of a receiver's range, keep what each core should hold; the trace
// and the cycles are those of eager copies.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "support/dma_requests.hpp"

using namespace ldmsim;

namespace {

constexpr std::size_t kBuf = 128;

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 13 + static_cast<std::size_t>(seed)) & 0xFF);
  return v;
}

DmaRequest bcast(DeviceAddr main, std::uint64_t ldm, std::uint64_t length, bool on_read,
                 DmaMode mode = DmaMode::kBcast) {
  DmaRequest r = testing::dma_request(DmaOp::kGet, main, ldm, length, 0, 0, "dma");
  r.mode = mode;
  r.replicate_on_read = on_read;
  return r;
}

struct Outcome {
  std::vector<std::vector<std::byte>> snaps;  ///< each core's buffer at the end, by core id
  std::vector<std::byte> put;                 ///< what core 2 put from its buffer before readying it
  std::vector<DmaEvent> events;
  Cycle cycles = 0;
};

/// On the 2x2 `tiny` group: core 3 reads `a` into every core's buffer (BCAST, or ROW into row 1), eagerly or on
/// read; core 1 reads b's first 32 bytes over bytes 32..63 of its buffer and core 2 puts its buffer to `y`, neither
/// readying it; then core 0, the first receiver of the BCAST, reads `b` over its own buffer; then every core readies
/// its buffer and snapshots it.
Outcome run(bool on_read, DmaMode mode = DmaMode::kBcast) {
  Machine m{Arch::preset("tiny")};
  const auto a = pattern(kBuf, 5), b = pattern(kBuf, 77);
  const DeviceAddr xa = m.allocate_bytes(kBuf), xb = m.allocate_bytes(kBuf), y = m.allocate_bytes(kBuf);
  m.write_bytes(xa, a);
  m.write_bytes(xb, b);
  m.write_bytes(y, std::vector<std::byte>(kBuf));
  Outcome out;
  out.snaps.assign(4, std::vector<std::byte>(kBuf));
  m.launch(LaunchSpec{.name = "on-read"}, [&](Core& core) {
     const LdmAddr at = core.ldm().alloc_bytes(kBuf);
     std::memset(core.ldm().bytes(at), 0xEE, kBuf);
     core.barrier();
     if (core.id() == 3) core.dma(bcast(xa, at, kBuf, on_read, mode)).wait();
     core.barrier();
     if (core.id() == 1) core.dma(testing::dma_get(xb, at + 32, 32)).wait();
     if (core.id() == 2) core.dma(testing::dma_request(DmaOp::kPut, y, at, kBuf)).wait();
     core.barrier();
     if (core.id() == 0 && mode == DmaMode::kBcast) core.dma(testing::dma_get(xb, at, kBuf)).wait();
     core.barrier();
     core.ready_ldm_bytes(at, kBuf);
     std::memcpy(out.snaps[static_cast<std::size_t>(core.id())].data(), core.ldm().bytes(at), kBuf);
   }).join();
  out.put.resize(kBuf);
  m.read_bytes(y, out.put);
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { out.events.push_back(e); });
  out.cycles = m.stats().cycles;
  return out;
}

bool same_events(const std::vector<DmaEvent>& x, const std::vector<DmaEvent>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::memcmp(&x[i], &y[i], sizeof(DmaEvent)) != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("copies made on read hold what eager copies hold", "[modes][on-read]") {
  for (const DmaMode mode : {DmaMode::kBcast, DmaMode::kRow}) {
    INFO(to_string(mode));
    const Outcome eager = run(false, mode), lazy = run(true, mode);
    CHECK(lazy.snaps == eager.snaps);
    CHECK(lazy.put == eager.put);
    CHECK(same_events(lazy.events, eager.events));
    CHECK(lazy.cycles == eager.cycles);
    // The expectations themselves: a receiver's bytes, with the part a later get overwrote.
    const auto a = pattern(kBuf, 5), b = pattern(kBuf, 77);
    if (mode == DmaMode::kBcast) {
      CHECK(eager.snaps[0] == b);  // its own get over the source range
      CHECK(eager.snaps[3] == a);
      CHECK(eager.put == a);  // core 2 put its copy before readying it
    } else {
      CHECK(eager.snaps[2] == a);  // row 1 (cores 2, 3) received
      CHECK(eager.snaps[0] == std::vector<std::byte>(kBuf, std::byte{0xEE}));
    }
    std::vector<std::byte> partly = a;
    for (std::size_t i = 32; i < 64; ++i) partly[i] = b[i - 32];
    if (mode == DmaMode::kBcast) CHECK(eager.snaps[1] == partly);
  }
}

TEST_CASE("a source freed and written over first gives its receivers their copies", "[modes][on-read]") {
  Machine m{Arch::preset("tiny")};
  const auto a = pattern(kBuf, 9);
  const DeviceAddr xa = m.allocate_bytes(kBuf);
  m.write_bytes(xa, a);
  std::vector<std::vector<std::byte>> snaps(4, std::vector<std::byte>(kBuf));
  m.launch(LaunchSpec{.name = "free-source"}, [&](Core& core) {
     const LdmAddr at = core.ldm().alloc_bytes(kBuf);
     core.barrier();
     if (core.id() == 3) core.dma(bcast(xa, at, kBuf, true)).wait();
     core.barrier();
     if (core.id() == 0) {  // the first receiver holds the bytes the others are owed
       core.ldm().free_at(at);
       const LdmAddr again = core.ldm().alloc_bytes(kBuf);
       std::memset(core.ldm().bytes(again), 0x11, kBuf);  // a pointer write the engine cannot see
     }
     core.barrier();
     if (core.id() != 0) core.ready_ldm_bytes(at, kBuf);
     std::memcpy(snaps[static_cast<std::size_t>(core.id())].data(), core.ldm().bytes(at), kBuf);
   }).join();
  CHECK(snaps[0] == std::vector<std::byte>(kBuf, std::byte{0x11}));
  for (std::size_t c = 1; c < 4; ++c) {
    INFO("core " << c);
    CHECK(snaps[c] == a);
  }
}

TEST_CASE("a group of more than 64 cores copies on-read gets eagerly", "[modes][on-read]") {
  // Owed copies name their receivers in a 64-bit mask: a larger group gets every copy when the get lands, so a
  // receiver that reads without readying still sees the bytes.
  Arch arch = Arch::preset("tiny");
  arch.rows = 3;
  arch.cols = 32;
  Machine m{arch};
  const auto a = pattern(kBuf, 21);
  const DeviceAddr xa = m.allocate_bytes(kBuf);
  m.write_bytes(xa, a);
  std::vector<std::vector<std::byte>> snaps(arch.cores_per_group(), std::vector<std::byte>(kBuf));
  m.launch(LaunchSpec{.name = "wide-group"}, [&](Core& core) {
     const LdmAddr at = core.ldm().alloc_bytes(kBuf);
     core.barrier();
     if (core.id() == 95) core.dma(bcast(xa, at, kBuf, true)).wait();
     core.barrier();
     std::memcpy(snaps[static_cast<std::size_t>(core.id())].data(), core.ldm().bytes(at), kBuf);
   }).join();
  for (std::size_t c = 0; c < snaps.size(); ++c) {
    INFO("core " << c);
    CHECK(snaps[c] == a);
  }
}

TEST_CASE("an RMA that writes over a source range gives its receivers their copies first", "[modes][on-read][rma]") {
  // Core 0 is the first receiver of an on-read BCAST that core 1 is owed; core 2 then writes over core 0's range by
  // an RMA put. Core 1 must still read what landed, as with eager copies.
  Machine m{Arch::preset("sw26010pro")};
  const auto a = pattern(kBuf, 33);
  const DeviceAddr xa = m.allocate_bytes(kBuf);
  m.write_bytes(xa, a);
  std::vector<std::byte> seen(kBuf);
  m.launch(LaunchSpec{.groups = {0}, .name = "rma-over-source"}, [&](Core& core) {
     const LdmAddr at = core.ldm().alloc_bytes(kBuf), other = core.ldm().alloc_bytes(kBuf);
     std::memset(core.ldm().bytes(other), 0x22, kBuf);
     core.barrier();
     if (core.id() == 0) core.dma(bcast(xa, at, kBuf, true)).wait();
     core.barrier();
     if (core.id() == 2) core.wait_until(core.rma(RmaRequest{.peer = 0, .local = other, .remote = at, .bytes = kBuf}));
     core.barrier();
     if (core.id() == 1) {
       core.ready_ldm_bytes(at, kBuf);
       std::memcpy(seen.data(), core.ldm().bytes(at), kBuf);
     }
   }).join();
  CHECK(seen == a);
}
