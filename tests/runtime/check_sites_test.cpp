// Code sites of kernels on the C++ API (docs/checking.md "Sites"): checking reports, traps and lint warnings name
// the source file and line of the kernel's call that issued the request, and reports and lint sites are grouped by
// it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/runtime/lint_sites.hpp"
#include "runtime/trap_of.hpp"
#include "support/dma_requests.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {

/// How a report names a line of this file (relative to the project's source tree).
std::string here(int line) {
  return "kernel code at tests/runtime/check_sites_test.cpp:" + std::to_string(line);
}

}  // namespace

TEST_CASE("a report names the lines of both requests' calls", "[check][sites]") {
  Machine m{Arch::preset("tiny")};
  enable_checks(m, CheckSet{true, true, true});
  auto x = m.alloc<float>(64, AllocOptions{.name = "x"});
  auto y = m.alloc<float>(64, AllocOptions{.name = "y"});
  m.upload(x, std::vector<float>(64, 1.0f));
  constexpr int kGetLine = __LINE__ + 6;
  constexpr int kPutLine = __LINE__ + 6;
  m.launch_kernel(LaunchSpec{.name = "early"}, [x, y](Core& core) {
     if (core.id() != 1) return;
     auto buf = core.ldm().alloc<float>(64);
     // The get's destination is read (as a put's source) before the get was waited for.
     DmaHandle get = core.get(buf, x);
     DmaHandle put = core.put(y, LdmSpan<const float>(buf));
     get.wait();
     put.wait();
   }).join();
  const auto reports = check_reports(m);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].kind == "ldm-race");
  CHECK_THAT(reports[0].message,
             Catch::Contains("Core::put (PE put, 256 bytes, main [") && Catch::Contains(here(kPutLine) + ", done at") &&
                 Catch::Contains("its Core::get (PE get, 256 bytes") && Catch::Contains(here(kGetLine) + ", done at"));
}

TEST_CASE("the same race from two calls is two reports, from one call in a loop one", "[check][sites]") {
  Machine m{Arch::preset("tiny")};  // 2 x 2
  enable_checks(m, CheckSet{true, false, false});
  auto y = m.alloc<float>(64 * 4, AllocOptions{.name = "y"});
  // Every core puts 64 floats at y + 60 * id, overlapping its neighbour's: cores 0 and 1 from one line, 2 and 3
  // from another, so the pairs 0-1, 1-2 and 2-3 are three sites.
  constexpr int kLowLine = __LINE__ + 5;
  constexpr int kHighLine = __LINE__ + 5;
  auto kernel = [y](Core& core) {
    auto buf = core.ldm().alloc<float>(64);
    const DevicePtr<float> at = y + static_cast<std::size_t>(60 * core.id());
    if (core.id() < 2) core.put(at, LdmSpan<const float>(buf)).wait();
    if (core.id() >= 2) core.put(at, LdmSpan<const float>(buf)).wait();
  };
  m.launch_kernel(LaunchSpec{.name = "k"}, kernel).join();
  const auto reports = check_reports(m);
  REQUIRE(reports.size() == 3);
  std::vector<std::string> lines;
  for (const CheckReport& r : reports) {
    CHECK(r.kind == "dma-race");
    CHECK(r.count == 1);
    const bool low = r.message.find(here(kLowLine) + ",") != std::string::npos;
    const bool high = r.message.find(here(kHighLine) + ",") != std::string::npos;
    lines.push_back(low && high ? "both" : low ? "low" : high ? "high" : "none");
  }
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::string>{"both", "high", "low"});
}

TEST_CASE("a trapped request names its call before the hint", "[check][sites][fault]") {
  Machine m{Arch::preset("tiny")};
  auto y = m.alloc<float>(64, AllocOptions{.name = "y"});
  constexpr int kPutLine = __LINE__ + 4;
  const auto f = trap_of(m.launch(LaunchSpec{.name = "past"}, [y](Core& core) {
    if (core.id() != 1) return;
    auto buf = core.ldm().alloc<float>(64);
    core.put(y + 32, LdmSpan<const float>(buf)).wait();  // 128 bytes past y's end
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDmaOutOfBounds);
  const std::string detail = f->detail();
  const std::size_t site = detail.find("[called from " + here(kPutLine) + "]");
  REQUIRE(site != std::string::npos);
  CHECK(site < detail.find("; hint: "));
}

TEST_CASE("a lint warning names its call and two calls are two lint sites", "[check][sites][modes]") {
  Machine m{Arch::preset("tiny"), MachineOptions{.alignment = AlignmentPolicy::kLint}};
  const DeviceAddr x = m.allocate_bytes(64);
  constexpr int kFirstLine = __LINE__ + 6;
  constexpr int kSecondLine = __LINE__ + 6;
  // Not inside REQUIRE_FALSE's parentheses: GCC names a call written in a macro's arguments by the macro's line.
  const auto fault = trap_of(m.launch(LaunchSpec{.name = "legacy"}, [x](Core& core) {
    if (core.id() != 2) return;
    const LdmAddr at = core.ldm().alloc_bytes(32);
    core.dma(testing::dma_get(x + 2, at, 6)).wait();  // main address 2 mod 4 and length 6
    core.dma(testing::dma_get(x + 2, at, 6)).wait();
  }));
  REQUIRE_FALSE(fault);
  const std::vector<LintSite> sites = lint_sites(m);
  REQUIRE(sites.size() == 2);  // both at the same cycle on the ideal model: in either order
  const std::string first = "[called from " + here(kFirstLine) + "]";
  const std::string second = "[called from " + here(kSecondLine) + "]";
  const bool in_order = sites[0].message.ends_with(first);
  CHECK_THAT(sites[in_order ? 0 : 1].message, Catch::EndsWith(first));
  CHECK_THAT(sites[in_order ? 1 : 0].message, Catch::EndsWith(second));
  std::vector<std::string> markers;
  for (const Marker& mk : m.trace()[0]->markers())
    if (mk.kind == MarkerKind::kLintWarning) markers.push_back(mk.text);
  REQUIRE(markers.size() == 2);
  CHECK_THAT(markers[0], Catch::EndsWith(first));  // the trace marks each request in issue order
  CHECK_THAT(markers[1], Catch::EndsWith(second));
}

TEST_CASE("a lint warning names the allocation as the trap of the same request does", "[check][sites][modes]") {
  const auto run = [](AlignmentPolicy policy, std::string& text) {
    Machine m{Arch::preset("tiny"), MachineOptions{.alignment = policy}};
    const DeviceAddr x = m.allocate_bytes(64, AllocOptions{.name = "weights"});
    const auto fault = trap_of(m.launch(LaunchSpec{.name = "legacy"}, [x](Core& core) {
      if (core.id() != 2) return;
      const LdmAddr at = core.ldm().alloc_bytes(32);
      core.dma(testing::dma_get(x + 6, at, 8)).wait();  // main address 2 mod 4
    }));
    if (fault) {
      text = fault->detail();
    } else if (const std::vector<LintSite> sites = lint_sites(m); sites.size() == 1) {
      text = sites[0].message;
    }
  };
  std::string trapped;
  std::string linted;
  run(AlignmentPolicy::kTrap, trapped);
  run(AlignmentPolicy::kLint, linted);
  const std::string buffer = " [main memory: byte 6 of 'weights' (64 bytes)]";
  for (const std::string& text : {trapped, linted}) {
    INFO(text);
    const std::size_t at = text.find(buffer);
    REQUIRE(at != std::string::npos);
    CHECK(at < text.find("; hint: "));
  }
}
