// RMA between local stores on hand-computed cases (sw26010pro: issue 61, 25.6 B/cycle, broadcasts 15 B/cycle,
// latency 53, 4 cycles per 2 x 2 cluster crossed): landing times, pipelining of two operations, a row
// broadcast reaching every core of the row, a get, the blocking wait and the traps.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {
/// Word i of core id's buffer before any transfer.
std::uint32_t word(int id, int i) {
  return static_cast<std::uint32_t>(id * 10000 + i);
}
}  // namespace

TEST_CASE("RMA puts and gets land when the model says and move the bytes", "[rma]") {
  Machine m{Arch::preset("sw26010pro")};
  std::vector<Cycle> landed(4, 0);
  std::vector<std::uint32_t> seen(64, 0);
  m.launch(LaunchSpec{.groups = {0}, .name = "rma"}, [&](Core& core) {
     auto buf = core.ldm().alloc<std::uint32_t>(1024);  // the same offset on every core
     for (int i = 0; i < 1024; ++i) buf[static_cast<std::size_t>(i)] = word(core.id(), i);
     core.barrier();
     if (core.id() == 0) {
       const Cycle t0 = core.cycle();
       RmaRequest r{.op = RmaOp::kPut, .peer = 1, .local = buf.ldm_addr(), .remote = buf.ldm_addr() + 64, .bytes = 64};
       landed[0] = core.rma(r) - t0;  // 61 issue + ceil(64 / 25.6) = 3 + 53, same cluster
       r.peer = 63;                   // the second operation: issue 61..122, link 122..125, 53 + 6 hops * 4
       landed[1] = core.rma(r) - t0;
       RmaRequest b{.op = RmaOp::kPut,
                    .scope = RmaScope::kRow,
                    .local = buf.ldm_addr(),
                    .remote = buf.ldm_addr() + 2048,
                    .bytes = 1024};
       landed[2] = core.rma(b) - t0;  // issue 122..183, link 183..252 (1024 / 15), 53 + 3 hops * 4
       core.wait_until(core.cycle() + 1000);
     }
     core.barrier();
     if (core.id() == 2) {
       const Cycle t0 = core.cycle();
       RmaRequest g{.op = RmaOp::kGet, .peer = 5, .local = buf.ldm_addr() + 3072, .remote = buf.ldm_addr(), .bytes = 8};
       landed[3] = core.rma(g) - t0;  // 61 + 1 + 53 + 1 hop (core 5 is in the next cluster)
     }
     core.barrier();
     seen[static_cast<std::size_t>(core.id())] = buf[16] + buf[512] + (core.id() == 2 ? buf[768] : 0);
   }).join();
  CHECK(landed[0] == 61 + 3 + 53);
  CHECK(landed[1] == 122 + 3 + 53 + 24);
  CHECK(landed[2] == 183 + 69 + 53 + 12);
  CHECK(landed[3] == 61 + 1 + 53 + 4);
  CHECK(seen[1] == word(0, 0) + word(0, 0));      // word 16 from core 0's put, word 512 from the row broadcast
  CHECK(seen[63] == word(0, 0) + word(63, 512));  // the second put reached 63; the broadcast did not
  CHECK(seen[7] == word(7, 16) + word(0, 0));     // row 0 got the broadcast
  CHECK(seen[0] == word(0, 16) + word(0, 0));     // the broadcast includes the sender
  CHECK(seen[2] == word(2, 16) + word(0, 0) + word(5, 0));  // the get brought core 5's word 0
}

TEST_CASE("RMA traps: no RMA on the arch, misaligned, out of the local store, bad peer", "[rma][fault]") {
  Machine sw{Arch::preset("sw26010")};
  auto none = trap_of(sw.launch(LaunchSpec{.groups = {0}, .name = "none"}, [](Core& core) {
    if (core.id() == 0) core.rma({.peer = 1, .bytes = 8});
  }));
  REQUIRE(none);
  CHECK_THAT(std::string(none->what()), Catch::Contains("RMA is not available on arch 'sw26010'"));
  Machine pro{Arch::preset("sw26010pro")};
  const auto trap_with = [&](RmaRequest r) {
    return trap_of(pro.launch(LaunchSpec{.groups = {0}, .name = "bad"}, [r](Core& core) {
      if (core.id() == 0) core.rma(r);
    }));
  };
  auto odd = trap_with({.peer = 1, .bytes = 6});
  REQUIRE(odd);
  CHECK(odd->kind() == FaultKind::kDmaMisaligned);
  auto far = trap_with({.peer = 1, .remote = 262144 - 4, .bytes = 8});
  REQUIRE(far);
  CHECK(far->kind() == FaultKind::kDmaOutOfBounds);
  auto peer = trap_with({.peer = 64, .bytes = 8});
  REQUIRE(peer);
  CHECK_THAT(std::string(peer->what()), Catch::Contains("peer core 64 is not in the group (0..63)"));
}
