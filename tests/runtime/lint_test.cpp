// The lint alignment policy (MachineOptions::alignment = kLint): a misaligned request moves its exact bytes, counts a
// lint warning and records a kLintWarning marker and event status; every non-alignment violation still traps.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/sim/logging.hpp"
#include "runtime/trap_of.hpp"
#include "support/dma_requests.hpp"
#include "support/stderr_capture.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {

DmaRequest get(DeviceAddr main, std::uint64_t ldm, std::uint64_t length, std::uint64_t bsize = 0,
               std::uint64_t stride = 0) {
  return testing::dma_get(main, ldm, length, bsize, stride);
}

}  // namespace

TEST_CASE("under lint a misaligned get moves its bytes and records a warning", "[modes][fault]") {
  Machine m{Arch::preset("tiny"), MachineOptions{.alignment = AlignmentPolicy::kLint}};
  std::vector<std::byte> src(64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i + 1);
  const DeviceAddr x = m.allocate_bytes(64);
  m.write_bytes(x, src);
  std::vector<std::byte> ldm(32);
  REQUIRE_FALSE(trap_of(m.launch(LaunchSpec{.name = "legacy"}, [x, &ldm](Core& core) {
    if (core.id() != 2) return;
    const LdmAddr at = core.ldm().alloc_bytes(32);
    std::memset(core.ldm().bytes(at), 0xEE, 32);
    core.compute({.cycles = 12});
    core.dma(get(x + 2, at, 6)).wait();  // main address 2 mod 4 and length 6
    std::memcpy(ldm.data(), core.ldm().bytes(at), 32);
  })));
  for (std::size_t i = 0; i < 32; ++i) {
    INFO("ldm byte " << i);
    CHECK(ldm[i] == (i < 6 ? src[2 + i] : std::byte{0xEE}));
  }
  CHECK(m.lint_warnings() == 1);
  const RunStats s = m.stats();
  CHECK(s.groups[0].cores[2].lint_warnings == 1);
  CHECK(s.groups[0].cores[2].dma_requests == 1);
  CHECK(s.groups[0].cores[2].dma_get_bytes == 6);
  std::vector<Marker> warnings;
  for (const Marker& mk : m.trace()[0]->markers())
    if (mk.kind == MarkerKind::kLintWarning) warnings.push_back(mk);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].core == 2);
  CHECK(warnings[0].cycle == 12);
  CHECK_THAT(warnings[0].text, Catch::Contains("main address = " + std::to_string(x + 2)));
  CHECK_THAT(warnings[0].text, Catch::Contains("4-byte DMA granularity"));
  std::vector<DmaEvent> events;
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 1);
  CHECK(events[0].status == DmaStatus::kLintWarning);
  CHECK(events[0].length == 6);
}

TEST_CASE("under lint a misaligned put writes exactly its bytes", "[modes]") {
  Machine m{Arch::preset("tiny"), MachineOptions{.alignment = AlignmentPolicy::kLint}};
  const DeviceAddr x = m.allocate_bytes(32);
  m.write_bytes(x, std::vector<std::byte>(32, std::byte{0x11}));
  m.launch(LaunchSpec{}, [x](Core& core) {
     if (core.id() != 0) return;
     const LdmAddr at = core.ldm().alloc_bytes(32);
     std::memset(core.ldm().bytes(at), 0x77, 32);
     DmaRequest r = get(x + 6, at + 2, 10);  // every address field and the length are 2 mod 4
     r.op = DmaOp::kPut;
     core.dma(r).wait();
   }).join();
  std::vector<std::byte> out(32);
  m.read_bytes(x, out);
  for (std::size_t i = 0; i < 32; ++i) {
    INFO("main byte " << i);
    CHECK(out[i] == (i >= 6 && i < 16 ? std::byte{0x77} : std::byte{0x11}));
  }
  CHECK(m.lint_warnings() == 1);
}

TEST_CASE("under lint out-of-bounds and shape violations still trap", "[modes][fault]") {
  Machine m{Arch::preset("tiny"), MachineOptions{.alignment = AlignmentPolicy::kLint}};
  const DeviceAddr x = m.allocate_bytes(64);
  auto run = [&](DmaRequest r) {
    return trap_of(m.launch(LaunchSpec{}, [r](Core& core) {
      if (core.id() == 1) core.dma(r).wait();
    }));
  };
  SECTION("misaligned and past the region's end") {
    const auto f = run(get(x + 62, 0, 6));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
    CHECK(f->core() == 1);
  }
  SECTION("misaligned and past the local store") {
    const auto f = run(get(x + 2, m.arch().ldm_bytes - 2, 6));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
    CHECK_THAT(f->detail(), Catch::Contains("local store"));
  }
  SECTION("a misaligned bsize that does not divide the length") {
    const auto f = run(get(x, 0, 16, 6, 0));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaFieldOverflow);
  }
  SECTION("an aligned out-of-bounds request") {
    const auto f = run(get(x, 0, 68));
    REQUIRE(f);
    CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
  }
  CHECK(m.lint_warnings() == 0);  // a trapped request is not a warning
}

TEST_CASE("under the default policy the same misaligned request traps", "[modes][fault]") {
  Machine m{Arch::preset("tiny")};
  CHECK(m.options().alignment == AlignmentPolicy::kTrap);
  const DeviceAddr x = m.allocate_bytes(64);
  const auto f = trap_of(m.launch(LaunchSpec{}, [x](Core& core) {
    if (core.id() == 2) core.dma(get(x + 2, 0, 6)).wait();
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDmaMisaligned);
  CHECK(m.lint_warnings() == 0);
}

TEST_CASE("a log line naming a kernel shows the control characters of its name escaped", "[modes][fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(64);
  set_log_level(spdlog::level::debug);  // the runtime logs each fault at debug
  std::optional<Fault> fault;
  const std::string text = test::capture_stderr([&] {
    fault = trap_of(m.launch(LaunchSpec{.name = "evil\x1b[2J\x07"}, [x](Core& core) {
      if (core.id() != 0) return;
      const LdmAddr at = core.ldm().alloc_bytes(32);
      core.dma(get(x + 2, at, 6)).wait();  // misaligned: traps
    }));
  });
  set_log_level(spdlog::level::warn);
  REQUIRE(fault);
  CHECK_THAT(text, Catch::Contains("in kernel 'evil\\x1b[2J\\x07'"));
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
}
