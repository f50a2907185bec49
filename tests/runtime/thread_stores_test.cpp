// Local stores lent per host thread (MachineOptions::thread_stores): the core groups a launch worker runs alone (no
// node sync) use that worker's stores, so one thread touches one group's worth of host pages however many groups it
// runs; groups run together keep their own. Each group's results are its own: its DMA engine and on-read copies
// follow its cores onto the borrowed stores, and copies owed and never made are dropped before the next group.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "support/dma_requests.hpp"

using namespace ldmsim;

namespace {

constexpr int kGroups = 4;
constexpr int kCores = 4;
constexpr std::size_t kBuf = 256;

/// 4 core groups of 2 x 2 cores.
Arch arch() {
  Arch a = Arch::preset("tiny");
  a.core_groups = kGroups;
  return Arch::from_json(a.to_json(), "test");
}

using Stores = std::vector<std::vector<const std::byte*>>;

/// The host address of each core's local store in one launch, by [group][core].
Stores stores_of(Machine& m, bool node_sync) {
  Stores at(kGroups, std::vector<const std::byte*>(kCores, nullptr));
  m.launch(LaunchSpec{.name = "where", .node_sync = node_sync}, [&at](Core& core) {
     at[static_cast<std::size_t>(core.cg())][static_cast<std::size_t>(core.id())] = core.ldm().bytes();
   }).join();
  return at;
}

std::size_t distinct_stores_of_core(const Stores& at, int core) {
  std::set<const std::byte*> seen;
  for (const auto& group : at) seen.insert(group[static_cast<std::size_t>(core)]);
  return seen.size();
}

}  // namespace

TEST_CASE("groups run alone on one host thread use that thread's local stores", "[runtime][ldm]") {
  for (const unsigned threads : {1u, 2u}) {
    Machine m{arch(), MachineOptions{.threads = threads, .thread_stores = true}};
    const Stores at = stores_of(m, false);
    for (int core = 0; core < kCores; ++core) CHECK(distinct_stores_of_core(at, core) == threads);
    // Cores of one group still have stores of their own.
    for (const auto& group : at) CHECK(std::set<const std::byte*>(group.begin(), group.end()).size() == kCores);
  }
}

TEST_CASE("without thread stores every group keeps its own local stores", "[runtime][ldm]") {
  Machine m{arch(), MachineOptions{.threads = 1}};
  const Stores first = stores_of(m, false);
  for (int core = 0; core < kCores; ++core) CHECK(distinct_stores_of_core(first, core) == kGroups);
  CHECK(stores_of(m, false) == first);
}

TEST_CASE("groups run together keep local stores of their own", "[runtime][ldm]") {
  Machine m{arch(), MachineOptions{.threads = 1, .thread_stores = true}};
  const Stores alone = stores_of(m, false);
  const Stores together = stores_of(m, true);
  for (int core = 0; core < kCores; ++core) CHECK(distinct_stores_of_core(together, core) == kGroups);
  // and the next launch of groups alone is back on the thread's stores
  CHECK(stores_of(m, false) == alone);
}

TEST_CASE("groups in turn on one thread's stores each move their own bytes", "[runtime][ldm]") {
  // Each group BCASTs its own pattern into every core's buffer with copies owed on read; cores 1-3 of the groups
  // never ready theirs (the copies are dropped at the launch's end), then every core writes its own marks over
  // half of the buffer, readies the buffer and puts it back. Every group must put its own pattern and marks.
  Machine m{arch(), MachineOptions{.threads = 1, .thread_stores = true}};
  const DeviceAddr in = m.allocate_bytes(kGroups * kBuf);
  const DeviceAddr out = m.allocate_bytes(kGroups * kCores * kBuf);
  std::vector<std::byte> pattern(kGroups * kBuf);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::byte>((i * 29 + 7) & 0xFF);
  m.write_bytes(in, pattern);
  const auto mark = [](int cg, int core, std::size_t i) {
    return static_cast<std::byte>((cg * 61 + core * 17 + static_cast<int>(i)) & 0xFF);
  };
  for (int round = 0; round < 2; ++round) {
    m.launch(LaunchSpec{.name = "own"}, [&](Core& core) {
       const auto cg = static_cast<std::size_t>(core.cg());
       const LdmAddr buf = core.ldm().alloc_bytes(kBuf);
       core.barrier();
       if (core.id() == 0) {
         DmaRequest get = testing::dma_get(in + cg * kBuf, buf, kBuf);
         get.mode = DmaMode::kBcast;
         get.replicate_on_read = true;
         core.dma(get).wait();
       }
       core.barrier();
       if (round == 0 && core.id() != 0) return;  // copies owed and never made
       core.ready_ldm_bytes(buf, kBuf);
       std::byte* bytes = core.ldm().bytes(buf);
       for (std::size_t i = kBuf / 2; i < kBuf; ++i) bytes[i] = mark(core.cg(), core.id(), i);
       const std::size_t slot = (cg * kCores + static_cast<std::size_t>(core.id())) * kBuf;
       core.dma(testing::dma_request(DmaOp::kPut, out + slot, buf, kBuf, 0, 0)).wait();
     }).join();
  }
  std::vector<std::byte> got(kGroups * kCores * kBuf);
  m.read_bytes(out, got);
  for (int cg = 0; cg < kGroups; ++cg) {
    for (int core = 0; core < kCores; ++core) {
      const std::size_t slot = static_cast<std::size_t>(cg * kCores + core) * kBuf;
      for (std::size_t i = 0; i < kBuf; ++i) {
        const std::byte want = i < kBuf / 2 ? pattern[static_cast<std::size_t>(cg) * kBuf + i] : mark(cg, core, i);
        INFO("group " << cg << " core " << core << " byte " << i);
        REQUIRE(got[slot + i] == want);
      }
    }
  }
}
