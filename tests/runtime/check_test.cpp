// Checking mode over the C++ kernel API (docs/checking.md): DMA races between cores (ordered only by barriers), the
// same core's overlapping requests in flight, put sources changed before the wait; reports grouped by site with
// counts, named by allocation, identical for any thread count; nothing reported when off, and no simulated result
// changed when on.
#include "ldmsim/runtime/check.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

constexpr CheckSet kAll{true, true, true};

/// Every core puts 64 floats at y + 60 * id: each overlaps its neighbour's by 4 floats (no barrier between them).
void overlapping_puts(Core& core, DevicePtr<float> y) {
  auto buf = core.ldm().alloc<float>(64);
  for (auto& v : buf) v = static_cast<float>(core.id());
  core.put(y + static_cast<std::size_t>(60 * core.id()), LdmSpan<const float>(buf)).wait();
}

std::vector<CheckReport> run_checked(Machine& m, const std::function<void(Core&)>& kernel, CheckSet checks = kAll) {
  enable_checks(m, checks);
  m.launch_kernel(LaunchSpec{.name = "k"}, kernel).join();
  return check_reports(m);
}

}  // namespace

TEST_CASE("check lists parse and name a bad word", "[check]") {
  CHECK(parse_check_set("all", "--check") == kAll);
  CHECK(parse_check_set("races,init", "--check") == CheckSet{true, true, false});
  CHECK(parse_check_set("off", "--check") == CheckSet{});
  CHECK(parse_check_set("", "--check") == CheckSet{});
  CHECK(to_string(CheckSet{true, false, true}) == "races,bounds");
  CHECK_THROWS_WITH(parse_check_set("races,ints", "LDMSIM_CHECK"),
                    Catch::Contains("LDMSIM_CHECK: 'ints' is not a check"));
}

TEST_CASE("overlapping puts of different cores are one report with a count, naming the allocation", "[check]") {
  Machine m{Arch::preset("tiny")};
  auto y = m.alloc<float>(64 * 4, AllocOptions{.name = "y"});
  const auto reports = run_checked(m, [y](Core& core) { overlapping_puts(core, y); });
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].kind == "dma-race");
  CHECK(reports[0].count == 3);  // cores 0-1, 1-2, 2-3
  CHECK(reports[0].kernel == "k");
  CHECK_THAT(reports[0].message, Catch::Contains("Core::put (PE put, 256 bytes") && Catch::Contains("in 'y'") &&
                                     Catch::Contains("overlap in main memory"));
  CHECK_THAT(format_check_report(reports[0]), Catch::StartsWith("check dma-race (3 times): kernel k, core group 0"));
}

TEST_CASE("a group barrier orders the accesses before it, a row barrier those of its row", "[check]") {
  Machine m{Arch::preset("tiny")};  // 2 x 2
  auto y = m.alloc<float>(64, AllocOptions{.name = "y"});
  // Core 0 writes y, every core reads it after the barrier: ordered.
  auto write_then_read = [y](Core& core, Scope scope) {
    auto buf = core.ldm().alloc<float>(64);
    if (core.id() == 0) core.put(y, LdmSpan<const float>(buf)).wait();
    core.barrier(scope);
    core.get(buf, y).wait();
  };
  CHECK(run_checked(m, [&](Core& core) { write_then_read(core, Scope::kGroup); }).empty());
  // A row barrier orders core 0's put before core 1's get (same row), not before cores 2 and 3's.
  clear_check_reports(m);
  const auto reports = run_checked(m, [&](Core& core) { write_then_read(core, Scope::kRow); });
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].count == 2);
  CHECK(reports[0].kind == "dma-race");
  // A put still in flight at the barrier is not ordered by it.
  clear_check_reports(m);
  const auto in_flight = run_checked(m, [y](Core& core) {
    auto buf = core.ldm().alloc<float>(64);
    DmaHandle h;
    if (core.id() == 0) h = core.put(y, LdmSpan<const float>(buf));
    core.barrier();
    if (core.id() == 3) core.get(buf, y).wait();
    if (core.id() == 0) h.wait();
  });
  REQUIRE(in_flight.size() == 1);
  CHECK(in_flight[0].core == 3);
}

TEST_CASE("reads of the same bytes by every core are no race", "[check]") {
  Machine m{Arch::preset("tiny")};
  auto x = m.alloc<float>(64, AllocOptions{.name = "x"});
  auto y = m.alloc<float>(64 * 4, AllocOptions{.name = "y"});
  CHECK(run_checked(m, [x, y](Core& core) {
          auto buf = core.ldm().alloc<float>(64);
          core.get(buf, x).wait();
          core.put(y + static_cast<std::size_t>(64 * core.id()), LdmSpan<const float>(buf)).wait();
        }).empty());
}

TEST_CASE("a core's own overlapping requests in flight and a changed put source are reported", "[check]") {
  Machine m{Arch::preset("tiny")};
  auto x = m.alloc<float>(64, AllocOptions{.name = "x"});
  auto y = m.alloc<float>(64 * 4, AllocOptions{.name = "y"});
  const auto reports = run_checked(m, [x, y](Core& core) {
    if (core.id() != 1) return;
    auto a = core.ldm().alloc<float>(64);
    auto b = core.ldm().alloc<float>(64);
    DmaHandle g1 = core.get(a, x);
    DmaHandle g2 = core.get(a, x);  // into ldm bytes the first get still writes
    g1.wait();
    g2.wait();
    DmaHandle p = core.put(y, LdmSpan<const float>(a));
    DmaHandle g3 = core.get(b, y);  // reads what the put in flight writes
    a[0] = 1.0f;                    // the put's source changes before its wait
    p.wait();
    g3.wait();
  });
  REQUIRE(reports.size() == 3);  // all at cycle 0 on the ideal model: in kind order
  CHECK(reports[0].kind == "dma-race");
  CHECK_THAT(reports[0].message, Catch::Contains("its own Core::put"));
  CHECK(reports[1].kind == "ldm-race");
  CHECK_THAT(reports[1].message, Catch::Contains("on ldm bytes that its Core::get"));
  CHECK(reports[2].kind == "put-source");
  CHECK_THAT(reports[2].message, Catch::Contains("changed the ldm source of Core::put"));
  for (const auto& r : reports) CHECK(r.core == 1);
}

TEST_CASE("checks off report nothing, and checks on change no simulated result", "[check]") {
  auto cycles = [](CheckSet checks, std::vector<CheckReport>& reports) {
    Machine m{Arch::preset("sw26010")};
    auto y = m.alloc<float>(60 * 64 + 4, AllocOptions{.name = "y"});
    enable_checks(m, checks);
    m.launch(AllGroups, [y](Core& core) {
       if (core.cg() == 0) overlapping_puts(core, y);
     }).join();
    reports = check_reports(m);
    return m.stats().cycles;
  };
  std::vector<CheckReport> off;
  std::vector<CheckReport> on;
  CHECK(cycles({}, off) == cycles(kAll, on));
  CHECK(off.empty());
  REQUIRE(on.size() == 1);
  CHECK(on[0].count == 63);
}

TEST_CASE("reports are the same for any number of host threads", "[check]") {
  auto reports = [](unsigned threads) {
    Machine m{Arch::preset("sw26010"), MachineOptions{.threads = threads}};
    auto y = m.alloc<float>(4 * (60 * 64 + 4), AllocOptions{.name = "y"});
    enable_checks(m, kAll);
    m.launch(AllGroups, [y](Core& core) {
       overlapping_puts(core, y + static_cast<std::size_t>(core.cg()) * (60 * 64 + 4));
     }).join();
    std::string text;
    for (const auto& r : check_reports(m)) text += format_check_report(r) + "\n";
    return text;
  };
  const std::string one = reports(1);
  CHECK_THAT(one, Catch::Contains("(252 times)"));  // one site over 4 groups x 63 pairs
  CHECK(reports(2) == one);
  CHECK(reports(4) == one);
}

TEST_CASE("requests of different core groups on the same bytes race unless a node barrier orders them", "[check]") {
  // Core 0 of group 0 puts y; core 0 of group 1 gets it, with or without a node barrier between them.
  auto run = [](bool node_barrier, unsigned threads) {
    Machine m{Arch::preset("sw26010"), MachineOptions{.threads = threads}};
    auto y = m.alloc<float>(64, AllocOptions{.name = "y"});
    enable_checks(m, kAll);
    m.launch_kernel(LaunchSpec{.groups = {0, 1}, .name = "k", .node_sync = node_barrier}, [y,
                                                                                           node_barrier](Core& core) {
       auto buf = core.ldm().alloc<float>(64);
       if (core.id() == 0 && core.cg() == 0) core.put(y, LdmSpan<const float>(buf)).wait();
       if (node_barrier) core.barrier(Scope::kNode);
       if (core.id() == 0 && core.cg() == 1) core.get(buf, y).wait();
     }).join();
    return check_reports(m);
  };
  const auto racing = run(false, 1);
  REQUIRE(racing.size() == 1);
  CHECK(racing[0].kind == "dma-race");
  CHECK(racing[0].cg == 1);
  CHECK(racing[0].count == 1);
  CHECK_THAT(racing[0].message, Catch::Contains("core group 0 core 0 Core::put") &&
                                    Catch::Contains("core group 1 core 0 Core::get") && Catch::Contains("in 'y'") &&
                                    Catch::Contains("no node barrier"));
  const auto threaded = run(false, 2);
  REQUIRE(threaded.size() == 1);
  CHECK(format_check_report(threaded[0]) == format_check_report(racing[0]));
  CHECK(run(true, 1).empty());
}
