// The cores of a group reach the DMA engine in (cycle, core) order, however out of order they become ready: the
// engine records a group's requests in the order they are served, so the trace shows the scheduler's choices.
#include <catch2/catch.hpp>
#include <cstdint>
#include <tuple>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

/// A pseudo-random amount of work for `core` in `round`, so that cores become ready in an order unrelated to
/// their ids (some rounds ascending, some descending, some scattered).
Cycle work(int core, int round) {
  const auto id = static_cast<std::uint64_t>(core);
  const auto r = static_cast<std::uint64_t>(round);
  switch (round % 3) {
    case 0:
      return id * 7;  // in core order
    case 1:
      return (63 - id) * 5;  // against it
    default:
      return (id * 2654435761u + r * 40503u) % 97;  // scattered, with ties
  }
}

}  // namespace

TEST_CASE("cores reach the engine in cycle and core order however they become ready", "[timing]") {
  Machine m{Arch::preset("sw26010")};
  const DeviceAddr x = m.allocate_bytes(64 * 256, {.alignment = 256});
  constexpr int kRounds = 9;
  m.launch(LaunchSpec{.name = "order"}, [x](Core& core) {
     auto buf = core.ldm().alloc<std::byte>(64);
     for (int round = 0; round < kRounds; ++round) {
       core.compute({.cycles = work(core.id(), round)});
       core.get(buf, DevicePtr<const std::byte>(x) + static_cast<std::size_t>(core.id()) * 256).wait();
       if (round == kRounds / 2) core.barrier();  // every core woken at one cycle, in core order
     }
   }).join();
  std::vector<DmaEvent> events;
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 64u * kRounds);
  std::size_t out_of_order = 0;
  for (std::size_t i = 1; i < events.size(); ++i) {
    const auto before = std::tuple(events[i - 1].issue, events[i - 1].core);
    const auto after = std::tuple(events[i].issue, events[i].core);
    if (!(before < after)) ++out_of_order;
  }
  CHECK(out_of_order == 0);
  // Not trivially in order: the requests of a round were made in an order other than the cores'.
  std::size_t id_descents = 0;
  for (std::size_t i = 1; i < events.size(); ++i) id_descents += events[i].core < events[i - 1].core ? 1u : 0u;
  CHECK(id_descents > 64u * kRounds / 4);
}
