// The streaming loop's read order (kernels/streaming.hpp): inputs in another core group's memory are read before
// local ones, so their bytes cross the link while the local reads are served.
#include <algorithm>
#include <catch2/catch.hpp>
#include <span>
#include <vector>

#include "ldmsim/kernels/streaming.hpp"
#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

/// Streams y = a + b on group 0's first core, a in group `a_group`'s memory and b in group `b_group`'s; returns the
/// core's gets in issue order and the cycles of the launch.
std::pair<std::vector<DmaEvent>, Cycle> add_on_group0(int a_group, int b_group) {
  Machine m(Arch::preset("sw26010pro"));
  constexpr std::size_t kElements = 4096;
  const auto a = m.alloc<f16>(kElements, {.cg = a_group, .name = "a"});
  const auto b = m.alloc<f16>(kElements, {.cg = b_group, .name = "b"});
  const auto y = m.alloc<f16>(kElements, {.cg = 0, .name = "y"});
  const Cycle before = m.stats().cycles;
  m.launch(LaunchSpec{.groups = {0}, .name = "add"}, [&](Core& core) {
     if (core.id() != 0) return;
     const DevicePtr<const f16> inputs[] = {DevicePtr<const f16>(a), DevicePtr<const f16>(b)};
     tiling::stream_dealt_tiles(core, inputs, y, kElements, 1024,
                                [&](tiling::Range, std::span<const std::span<const float>> xs, std::span<float> ys) {
                                  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = xs[0][i] + xs[1][i];
                                });
   }).join();
  std::vector<DmaEvent> gets;
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) {
    if (e.op == DmaOp::kGet) gets.push_back(e);
  });
  std::stable_sort(gets.begin(), gets.end(), [](const DmaEvent& l, const DmaEvent& r) { return l.issue < r.issue; });
  return {gets, m.stats().cycles - before};
}

}  // namespace

TEST_CASE("a streamed remote input is read before a local one and overlaps it", "[kernels][streaming]") {
  // The same add with the remote operand first or second in the kernel's input order: b's reads come first either
  // way, and both orders take the same cycles.
  const auto [remote_second, cycles_second] = add_on_group0(0, 1);
  const auto [remote_first, cycles_first] = add_on_group0(1, 0);
  REQUIRE(remote_second.size() == 2);  // core 0's tile (the tiles are dealt to 64 workers): one read each
  REQUIRE(remote_first.size() == 2);
  const std::uint64_t window = Arch::preset("sw26010pro").main_memory_bytes_per_cg;
  const auto group_of = [&](const DmaEvent& e) { return MainMemory::window_of(e.main, window); };
  CHECK(group_of(remote_second[0]) == 1);
  CHECK(group_of(remote_second[1]) == 0);
  CHECK(group_of(remote_first[0]) == 1);
  CHECK(group_of(remote_first[1]) == 0);
  CHECK(cycles_second == cycles_first);
}
