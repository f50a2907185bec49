// tiling::gather_each: every logical element of the range handed over once, in order, with the value it holds,
// where gather's reads put it; the same reads as gather (the simulated run does not change), through a staging
// buffer that holds the whole span or, when it does not, run by run in pieces.
#include <catch2/catch.hpp>
#include <cstddef>
#include <vector>

#include "ldmsim/kernels/tiling.hpp"
#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

/// Rows of 5 elements padded to 8, planes of 3 rows padded to 32: gaps between rows and planes.
Layout padded_layout() {
  Layout l;
  l.shape = Shape4{.n = 1, .c = 4, .h = 3, .w = 5};
  l.w_pitch = 8;
  l.hw_pitch = 32;
  l.chw_pitch = 128;
  l.total = 128;
  return l;
}

struct Gathered {
  std::vector<float> values;     // by logical index in the range, -1 where nothing was handed over
  std::size_t stretches = 0;     // calls of the visitor
  bool in_order = true;          // each stretch after the one before
  std::vector<float> by_gather;  // gather's output for the same range
  Cycle each_cycles = 0, gather_cycles = 0;
};

/// One core gathers logical [first, first + count) of a tensor whose every element holds its logical index,
/// through a staging buffer of `staging` elements, by gather_each and then (on a second machine) by gather.
Gathered gather_both(std::size_t staging, std::size_t first, std::size_t count) {
  const Layout layout = padded_layout();
  std::vector<f16> stored(layout.total, f16(-2.0f));
  for (std::size_t i = 0; i < layout.shape.elements(); ++i) stored[layout.offset_of(i)] = f16(static_cast<float>(i));
  Gathered g;
  g.values.assign(count, -1.0f);
  g.by_gather.assign(count, -1.0f);
  for (const bool each : {true, false}) {
    Machine m{Arch::preset("tiny")};
    auto x = m.alloc<f16>(layout.total, AllocOptions{.name = "x"});
    m.upload(x, stored);
    m.launch_kernel(LaunchSpec{.name = "gather"}, [&](Core& core) {
       if (core.id() != 0) return;
       auto buf = core.ldm().alloc<f16>(staging);
       const DevicePtr<const f16> base(x);
       if (each) {
         std::size_t next = 0;
         tiling::gather_each(core, buf, base, layout, first, count,
                             [&](std::size_t at, const f16* from, std::size_t n) {
                               g.in_order = g.in_order && at == next;
                               next = at + n;
                               ++g.stretches;
                               for (std::size_t i = 0; i < n; ++i) g.values[at + i] = static_cast<float>(from[i]);
                             });
         return;
       }
       auto out = core.ldm().alloc<f16>(count);
       tiling::gather(core, buf, base, layout, first, count, out.data());
       for (std::size_t i = 0; i < count; ++i) g.by_gather[i] = static_cast<float>(out[i]);
     }).join();
    (each ? g.each_cycles : g.gather_cycles) = m.stats().cycles;
  }
  return g;
}

}  // namespace

TEST_CASE("gather_each hands over every element of the range once and in order", "[kernels][tiling]") {
  // A staging buffer for the whole span (one widened read, a stretch per run), and one smaller than a run (each
  // run read in pieces).
  for (const std::size_t staging : {std::size_t{130}, std::size_t{5}}) {
    for (const auto& [first, count] : {std::pair<std::size_t, std::size_t>{0, 60}, {7, 31}, {14, 1}}) {
      INFO("staging " << staging << ", elements [" << first << ", " << first + count << ")");
      const Gathered g = gather_both(staging, first, count);
      for (std::size_t i = 0; i < count; ++i) CHECK(g.values[i] == static_cast<float>(first + i));
      CHECK(g.in_order);
      CHECK(g.stretches >= 1);
      CHECK(g.values == g.by_gather);
      CHECK(g.each_cycles == g.gather_cycles);
    }
  }
}
