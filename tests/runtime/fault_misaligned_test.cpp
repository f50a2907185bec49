// dma-misaligned traps raised through the kernel API: one case per descriptor field (main address, ldm address,
// length, bsize, stride) with kind, location, cycle, the field and its value (typed and in the message), the
// granularity and a hint.
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {

/// Joins a launch and returns its fault (nullopt when it ran cleanly).

using Src = DevicePtr<const std::uint16_t>;

struct Case {
  std::string name;
  std::function<void(Core&, Src)> issue;  ///< the faulting request, issued by core 2 at cycle 123
  std::string field;
  std::uint64_t offset;  ///< added to the buffer's address when the field is an address
  std::uint64_t value;   ///< expected value, when not an address
  std::string api;
  std::string hint;
};

}  // namespace

TEST_CASE("every misaligned DMA field traps with its name, value, the granularity and a hint", "[fault]") {
  const std::vector<Case> cases = {
      {"main address 2 mod 4",
       [](Core& c, Src p) {
         auto buf = c.ldm().alloc<std::uint16_t>(8);
         c.get(buf.first(4), p + 1).wait();
       },
       "main address", 2, 0, "Core::get", "pad this tensor at staging"},
      {"ldm address 2 mod 4",
       [](Core& c, Src p) {
         auto buf = c.ldm().alloc<std::uint16_t>(8);
         c.get(buf.subspan(1, 4), p).wait();
       },
       "ldm address", 0, 2, "Core::get", "place the ldm buffer at a multiple of 4"},
      {"length 6",
       [](Core& c, Src p) {
         auto buf = c.ldm().alloc<std::uint16_t>(8);
         c.put(DevicePtr<std::uint16_t>(p.addr()), LdmSpan<const std::uint16_t>(buf.first(3))).wait();
       },
       "length", 0, 6, "Core::put", "round the length up to 8"},
      {"bsize 6",
       [](Core& c, Src p) {
         auto buf = c.ldm().alloc<std::uint16_t>(12);
         c.get_strided(buf.first(12), p, 6, 4).wait();
       },
       "bsize", 0, 6, "Core::get_strided", "round bsize up to 8"},
      {"stride 2",
       [](Core& c, Src p) {
         auto buf = c.ldm().alloc<std::uint16_t>(16);
         c.get_strided(buf.first(16), p, 8, 2).wait();
       },
       "stride", 0, 2, "Core::get_strided", "round stride up to 4"},
  };
  for (const Case& k : cases) {
    DYNAMIC_SECTION(k.name) {
      Machine m{Arch::preset("tiny")};
      auto x = m.alloc<std::uint16_t>(256);
      const auto fault = trap_of(m.launch(
          LaunchSpec{.name = "misaligned"},
          [&k](Core& core, Src p) {
            if (core.id() != 2) return;
            core.compute({.cycles = 123});
            k.issue(core, p);
          },
          Src(x)));
      REQUIRE(fault);
      CHECK(fault->kind() == FaultKind::kDmaMisaligned);
      CHECK(fault->cg() == 0);
      CHECK(fault->core() == 2);
      CHECK(fault->cycle() == 123);  // tiny's ideal model charges no issue cycles
      CHECK(fault->kernel() == "misaligned");
      const std::uint64_t value = k.offset != 0 ? x.addr() + k.offset : k.value;
      const std::string what = fault->what();
      CHECK_THAT(what, Catch::StartsWith("trap dma-misaligned: cg 0 core 2 in kernel 'misaligned' at cycle 123: "));
      CHECK_THAT(what, Catch::Contains(k.api));
      CHECK_THAT(fault->detail(), Catch::Contains(k.field + " = " + std::to_string(value) + " ("));
      REQUIRE(fault->field());  // the field and its value, typed
      CHECK(*fault->field() == FaultField{k.field, value});
      CHECK_THAT(fault->detail(), Catch::Contains("is not a multiple of the 4-byte DMA granularity (it is 2 mod 4)"));
      CHECK_THAT(fault->detail(), Catch::Contains("hint: "));
      CHECK_THAT(fault->detail(), Catch::Contains(k.hint));
    }
  }
}

TEST_CASE("a misaligned request's trap names the allocation its main-memory side starts in", "[fault]") {
  Machine m{Arch::preset("tiny")};
  auto x = m.alloc<std::uint16_t>(256, AllocOptions{.name = "weights"});
  const auto fault = trap_of(m.launch(
      LaunchSpec{.name = "misaligned"},
      [](Core& core, Src p) {
        if (core.id() != 0) return;
        auto buf = core.ldm().alloc<std::uint16_t>(8);
        core.get(buf.first(4), p + 3).wait();
      },
      Src(x)));
  REQUIRE(fault);
  CHECK(fault->kind() == FaultKind::kDmaMisaligned);
  // The allocation, then the kernel's call (check_sites_test.cpp), then the hint.
  CHECK_THAT(fault->detail(), Catch::Contains("(it is 2 mod 4) [main memory: byte 6 of 'weights' (512 bytes)] [called "
                                              "from kernel code at tests/runtime/fault_misaligned_test.cpp:") &&
                                  Catch::Contains("]; hint: "));
}

TEST_CASE("a misaligned request moves no data", "[fault]") {
  Machine m{Arch::preset("tiny")};
  auto x = m.alloc<std::uint32_t>(16);
  m.upload(x, std::vector<std::uint32_t>(16, 0xAAAAAAAAu));
  const auto fault = trap_of(m.launch(
      LaunchSpec{},
      [](Core& core, DevicePtr<std::uint32_t> p) {
        if (core.id() != 0) return;
        auto buf = core.ldm().alloc<std::uint32_t>(4);
        for (auto& v : buf) v = 0x11111111u;
        // Length 16 is legal, the main address is 2 mod 4: nothing may be written, not even the first bytes.
        core.put(p.byte_offset(2), LdmSpan<const std::uint32_t>(buf)).wait();
      },
      x));
  REQUIRE(fault);
  CHECK(fault->kind() == FaultKind::kDmaMisaligned);
  std::vector<std::uint32_t> out(16);
  m.download(out, DevicePtr<const std::uint32_t>(x));
  CHECK(out == std::vector<std::uint32_t>(16, 0xAAAAAAAAu));
  CHECK(m.stats().dma_requests() == 0);  // a trapped request is not counted as moved
}
