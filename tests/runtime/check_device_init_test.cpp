// The init check of device memory (docs/checking.md): a get of bytes of a Machine::alloc'd region that no host write,
// upload or put wrote since the allocation is one report per site, naming the allocation and the bytes; bytes
// written by an earlier launch's put, by a put earlier in the same group's launch or by another group's put in the
// same launch count as written; allocations made before the check was turned on are not checked.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/check.hpp"

using namespace ldmsim;

namespace {

constexpr CheckSet kAll{true, true, true};

std::vector<CheckReport> reports_of_kind(const Machine& m, const std::string& kind) {
  std::vector<CheckReport> out;
  for (const auto& r : check_reports(m)) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("a get of device memory never written since its allocation is reported once, naming it", "[check][init]") {
  Machine m{Arch::preset("tiny")};  // 2 x 2 cores
  enable_checks(m, kAll);
  auto uploaded = m.alloc<float>(256, AllocOptions{.name = "uploaded"});
  auto never = m.alloc<float>(256, AllocOptions{.name = "never_written"});
  auto put_first = m.alloc<float>(64, AllocOptions{.name = "put_first"});
  auto half = m.alloc<float>(128, AllocOptions{.name = "half_uploaded"});
  m.upload(uploaded, std::vector<float>(256, 1.0f));
  m.upload(half, std::vector<float>(64, 2.0f));  // the first 64 of 128 floats

  // One launch: core 0 puts put_first, a barrier, then every core reads it (written by an earlier put of its group)
  // and its quarter of `uploaded` (written by the host): nothing to report.
  m.launch_kernel(LaunchSpec{.name = "fill"}, [&](Core& core) {
     auto buf = core.ldm().alloc<float>(64);
     if (core.id() == 0) core.put(put_first, LdmSpan<const float>(buf)).wait();
     core.barrier(Scope::kGroup);
     core.get(buf, put_first).wait();
     core.get(buf, uploaded + static_cast<std::size_t>(64 * core.id())).wait();
   }).join();
  CHECK(check_reports(m).empty());

  // The next launch reads its quarter of never_written on every core: one site, four occurrences, the first named.
  m.launch_kernel(LaunchSpec{.name = "read"}, [&](Core& core) {
     auto buf = core.ldm().alloc<float>(64);
     core.get(buf, put_first).wait();  // written by the earlier launch's put
     core.get(buf, never + static_cast<std::size_t>(64 * core.id())).wait();
   }).join();
  auto reports = reports_of_kind(m, "uninit-device-read");
  REQUIRE(reports.size() == 1);
  CHECK(check_reports(m).size() == 1);
  CHECK(reports[0].count == 4);
  CHECK(reports[0].kernel == "read");
  CHECK(reports[0].core == 0);
  CHECK_THAT(reports[0].message, Catch::Contains("core 0 Core::get (PE get, 256 bytes") &&
                                     Catch::Contains("of 'never_written' (bytes 0 to 256 of its 1024)") &&
                                     Catch::Contains("that nothing wrote since it was allocated"));

  // Only the bytes the upload did not reach: bytes 256 to 512 of half_uploaded.
  clear_check_reports(m);
  m.launch_kernel(LaunchSpec{.name = "tail"}, [&](Core& core) {
     auto buf = core.ldm().alloc<float>(128);
     if (core.id() == 0) core.get(buf, half).wait();
   }).join();
  reports = check_reports(m);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].kind == "uninit-device-read");
  CHECK_THAT(reports[0].message, Catch::Contains("of 'half_uploaded' (bytes 256 to 512 of its 512)"));

  // A get before the put that writes the bytes, in the same group, is still a read of never-written bytes.
  clear_check_reports(m);
  auto late = m.alloc<float>(64, AllocOptions{.name = "written_late"});
  m.launch_kernel(LaunchSpec{.name = "late"}, [&](Core& core) {
     auto buf = core.ldm().alloc<float>(64);
     if (core.id() != 0) return;
     core.get(buf, late).wait();
     core.put(late, LdmSpan<const float>(buf)).wait();
     core.get(buf, late).wait();  // now written
   }).join();
  reports = check_reports(m);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].count == 1);
  CHECK_THAT(reports[0].message, Catch::Contains("'written_late'"));
}

TEST_CASE("device init: allocations made before checking, init off, and another group's put are not reported",
          "[check][init]") {
  Machine m{Arch::preset("sw26010"), MachineOptions{.threads = 2}};
  auto before = m.alloc<float>(64, AllocOptions{.name = "before"});
  enable_checks(m, CheckSet{.races = true, .init = false, .bounds = true});
  auto unchecked = m.alloc<float>(64, AllocOptions{.name = "unchecked"});
  enable_checks(m, kAll);
  auto shared = m.alloc<float>(64, AllocOptions{.name = "shared"});
  // Group 0 puts `shared`, a node barrier, group 1 reads it; everyone reads the untracked allocations.
  m.launch_kernel(LaunchSpec{.groups = {0, 1}, .name = "k", .node_sync = true}, [&](Core& core) {
     auto buf = core.ldm().alloc<float>(64);
     if (core.id() == 0 && core.cg() == 0) core.put(shared, LdmSpan<const float>(buf)).wait();
     core.barrier(Scope::kNode);
     if (core.id() == 0 && core.cg() == 1) core.get(buf, shared).wait();
     core.get(buf, before).wait();
     core.get(buf, unchecked).wait();
   }).join();
  CHECK(check_reports(m).empty());
}

TEST_CASE("device init reports are the same for any number of host threads", "[check][init]") {
  auto reports = [](unsigned threads) {
    Machine m{Arch::preset("sw26010"), MachineOptions{.threads = threads}};
    enable_checks(m, kAll);
    auto x = m.alloc<float>(4 * 64 * 64, AllocOptions{.name = "x"});
    m.launch(AllGroups, [x](Core& core) {
       auto buf = core.ldm().alloc<float>(64);
       const std::size_t at = (static_cast<std::size_t>(core.cg()) * 64 + static_cast<std::size_t>(core.id())) * 64;
       if (core.id() % 2 == 0) core.put(x + at, LdmSpan<const float>(buf)).wait();
       core.get(buf, x + at).wait();  // odd cores read bytes nobody wrote
     }).join();
    std::string text;
    for (const auto& r : check_reports(m)) text += format_check_report(r) + "\n";
    return text;
  };
  const std::string one = reports(1);
  CHECK_THAT(one, Catch::Contains("check uninit-device-read (128 times)"));  // 32 odd cores x 4 groups
  CHECK(reports(2) == one);
  CHECK(reports(4) == one);
}
