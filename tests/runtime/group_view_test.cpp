// Group views: a Machine that sees some core groups of another, renumbered from 0. It allocates in its groups'
// memories, launches only on its groups (whose cores see the view's numbering, while faults name the node's
// groups), shares the clocks, stats and launch flag of the machine it views, and start_no_earlier orders groups
// as a control core joining other groups' work would.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

Arch four_groups() {
  Arch a = Arch::preset("sw26010");
  a.core_groups = 4;
  return a;
}

}  // namespace

TEST_CASE("a group view launches on its groups only, numbered from 0, and allocates in their memories",
          "[runtime][group_view]") {
  Machine m(four_groups());
  auto view = m.group_view({2, 3});
  REQUIRE(view->arch().core_groups == 2);
  const auto buf = view->alloc<std::int32_t>(2 * 64, {.cg = 1, .name = "seen"});
  CHECK(MainMemory::window_of(buf.addr(), m.arch().main_memory_bytes_per_cg) == 3);
  view->launch(LaunchSpec{.name = "mark"},
               [&](Core& core) {
                 auto tile = core.ldm().alloc<std::int32_t>(1);
                 tile[0] = core.cg() * 100 + core.node_cg();
                 const auto at = buf + static_cast<std::size_t>(core.cg() * 64 + core.id());
                 core.put(at, LdmSpan<const std::int32_t>(tile)).wait();
               })
      .join();
  std::vector<std::int32_t> seen(2 * 64);
  m.download(seen, DevicePtr<const std::int32_t>(buf));
  CHECK(seen[0] == 2);     // view group 0 is node group 2
  CHECK(seen[64] == 103);  // view group 1 is node group 3
  const RunStats node = m.stats();
  CHECK(node.groups[0].dma_requests() == 0);
  CHECK(node.groups[1].dma_requests() == 0);
  CHECK(node.groups[2].dma_requests() == 64);
  CHECK(node.groups[3].dma_requests() == 64);
  CHECK(node.groups[2].dma_remote_bytes() == 64 * 4);  // group 2 wrote into group 3's memory
  CHECK(node.groups[3].dma_remote_bytes() == 0);
  CHECK(view->stats().groups.size() == 2);
  CHECK(view->stats().cycles == node.cycles);
  CHECK(view->group_clock(0) == m.group_clock(2));
}

TEST_CASE("a fault on a group view names the node's core group", "[runtime][group_view]") {
  Machine m(four_groups());
  auto view = m.group_view({3});
  const auto buf = view->alloc<f16>(64);
  try {
    view->launch(LaunchSpec{.name = "bad"},
                 [&](Core& core) {
                   if (core.id() != 5) return;
                   auto tile = core.ldm().alloc<f16>(2);
                   core.get(tile, DevicePtr<const f16>(buf + 1)).wait();  // 2 bytes off the 4-byte rule
                 })
        .join();
    FAIL("no fault");
  } catch (const Fault& f) {
    CHECK(f.cg() == 3);
    CHECK(f.core() == 5);
  }
}

TEST_CASE("a view shares the launch flag of the machine it views", "[runtime][group_view]") {
  Machine m(four_groups());
  auto view = m.group_view({1});
  Launch running = m.launch(LaunchSpec{.groups = {0}, .name = "a"}, [](Core& core) { core.compute({.cycles = 5}); });
  CHECK_THROWS_AS(view->alloc<float>(4), std::logic_error);
  running.join();
  Launch other = view->launch(LaunchSpec{.name = "b"}, [](Core& core) { core.compute({.cycles = 5}); });
  CHECK_THROWS_AS(m.alloc<float>(4), std::logic_error);
  other.join();
  CHECK(m.group_clock(0) == 5);
  CHECK(m.group_clock(1) == 5);
}

TEST_CASE("start_no_earlier moves a group's next launch, never back", "[runtime][group_view]") {
  Machine m(four_groups());
  m.launch(LaunchSpec{.groups = {0}, .name = "a"}, [](Core& core) { core.compute({.cycles = 1000}); }).join();
  CHECK(m.group_clock(0) == 1000);
  CHECK(m.group_clock(1) == 0);
  m.start_no_earlier({1}, m.group_clock(0));
  m.start_no_earlier({0}, 10);
  CHECK(m.group_clock(0) == 1000);
  m.launch(LaunchSpec{.groups = {1}, .name = "b"}, [](Core& core) { core.compute({.cycles = 7}); }).join();
  CHECK(m.group_clock(1) == 1007);
  CHECK(m.stats().groups[1].cores[0].busy_cycles == 7);
}

TEST_CASE("bad group views are refused", "[runtime][group_view]") {
  Machine m(four_groups());
  CHECK_THROWS_AS(m.group_view({}), ConfigError);
  CHECK_THROWS_AS(m.group_view({1, 1}), ConfigError);
  CHECK_THROWS_AS(m.group_view({4}), ConfigError);
  CHECK_THROWS_AS(m.group_view({-1}), ConfigError);
  auto view = m.group_view({0, 2});
  CHECK_THROWS_AS(view->alloc<float>(4, {.cg = 2}), ConfigError);
  CHECK_THROWS_AS(view->group_view({2}), ConfigError);
  CHECK_THROWS_AS(m.start_no_earlier({7}, 1), ConfigError);
  CHECK_NOTHROW(view->group_view({1}));  // a view of a view
}
