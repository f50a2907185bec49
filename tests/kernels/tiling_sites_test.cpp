// Code sites through the operator library's tiling helpers (docs/checking.md "Sites"): a request a helper issues
// on a kernel's behalf is named by the kernel's line that called the helper, not by a line of the helper.
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "ldmsim/kernels/matrix_block.hpp"
#include "ldmsim/kernels/tiling.hpp"
#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/check.hpp"

using namespace ldmsim;

namespace {

/// How a report names a line of this file (relative to the project's source tree).
std::string here(int line) {
  return "kernel code at tests/kernels/tiling_sites_test.cpp:" + std::to_string(line) + ",";
}

}  // namespace

TEST_CASE("overlapping put_range tiles of two cores name the kernel's line", "[check][sites]") {
  Machine m{Arch::preset("tiny")};
  enable_checks(m, CheckSet{true, false, false});
  auto y = m.alloc<f16>(4 * 64, AllocOptions{.name = "y"});
  constexpr int kPutLine = __LINE__ + 4;
  m.launch_kernel(LaunchSpec{.name = "tiles"}, [y](Core& core) {
     auto buf = core.ldm().alloc<f16>(64);
     const std::size_t at = 60 * static_cast<std::size_t>(core.id());  // 4 elements into the next core's tile
     tiling::put_range(core, y, buf, tiling::Range{at, at + 64}).wait();
   }).join();
  const auto reports = check_reports(m);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].kind == "dma-race");
  CHECK(reports[0].count == 3);
  CHECK_THAT(reports[0].message, Catch::Contains(here(kPutLine)) && !Catch::Contains("tiling.hpp"));
}

TEST_CASE("a gather and a block read of never-written memory name the kernel's lines", "[check][sites]") {
  Machine m{Arch::preset("tiny")};
  enable_checks(m, CheckSet{false, true, false});
  auto x = m.alloc<f16>(256, AllocOptions{.name = "never_written"});
  constexpr int kGatherLine = __LINE__ + 6;
  constexpr int kBlockLine = __LINE__ + 7;
  m.launch_kernel(LaunchSpec{.name = "read"}, [x](Core& core) {
     if (core.id() != 0) return;
     auto staging = core.ldm().alloc<f16>(66);
     auto out = core.ldm().alloc<f16>(64);
     tiling::gather(core, staging, DevicePtr<const f16>(x), Layout::natural(Shape4{.n = 256}), 0, 64, out.data());
     const tiling::BlockShape block{.first = 128, .pitch = 16, .rows = 4, .count = 8};
     tiling::get_block(core, staging, DevicePtr<const f16>(x), 256, block).wait();
   }).join();
  const auto reports = check_reports(m);
  REQUIRE(reports.size() == 2);
  for (const CheckReport& r : reports) {
    CHECK(r.kind == "uninit-device-read");
    CHECK_THAT(r.message, !Catch::Contains("tiling.cpp") && !Catch::Contains("matrix_block.cpp"));
  }
  CHECK_THAT(reports[0].message, Catch::Contains(here(kGatherLine)));
  CHECK_THAT(reports[1].message, Catch::Contains(here(kBlockLine)));
}
