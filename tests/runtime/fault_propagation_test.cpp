// What a fault does to the rest of a launch: the other cores of its group unwind (no hang, no terminate), join()
// rethrows the first fault in (cycle, cg, core) order across groups, and the trace recorded so far is kept.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/trace/file.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {

/// tiny with `groups` core groups (validated through the JSON loader).
Arch tiny_groups(std::uint32_t groups) {
  Arch a = Arch::preset("tiny");
  a.core_groups = groups;
  return Arch::from_json(a.to_json(), "test");
}

std::vector<Marker> markers_of(const Machine& m, int cg, MarkerKind kind) {
  std::vector<Marker> out;
  for (const Marker& mk : m.trace()[static_cast<std::size_t>(cg)]->markers())
    if (mk.kind == kind) out.push_back(mk);
  return out;
}

}  // namespace

TEST_CASE("a fault aborts the other cores of its group at their next API call", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(4096);
  const auto f = trap_of(m.launch(LaunchSpec{.name = "loop"}, [x](Core& core) {
    auto buf = core.ldm().alloc<std::uint32_t>(16);
    for (int i = 0; i < 1000; ++i) {
      core.get(buf, DevicePtr<const std::uint32_t>(x)).wait();
      core.compute({.cycles = 10});
      if (core.id() == 2 && i == 20) throw std::runtime_error("stop");
    }
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kKernelException);
  CHECK(f->core() == 2);
  CHECK(f->cycle() == 210);  // 21 iterations of 10 cycles (the ideal model charges nothing for DMA)
  const RunStats s = m.stats();
  for (int c = 0; c < 4; ++c) {
    INFO("core " << c);
    // Cores run in simulated-time order, so nobody got further than one iteration past the fault.
    CHECK(s.groups[0].cores[static_cast<std::size_t>(c)].dma_requests <= 22);
  }
  CHECK(markers_of(m, 0, MarkerKind::kCoreExit).size() == 4);
  CHECK(markers_of(m, 0, MarkerKind::kLaunchEnd).size() == 1);
  // The machine is usable again after a faulted launch.
  CHECK_NOTHROW(m.launch(LaunchSpec{}, [](Core& core) { core.barrier(); }).join());
}

TEST_CASE("cores parked at a barrier are woken and unwound by a fault", "[fault][barrier]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "parked"}, [](Core& core) {
    if (core.id() == 3) {
      core.compute({.cycles = 100});
      core.ldm().alloc_bytes(1u << 20);  // ldm-overflow while the others wait at the barrier
    }
    core.barrier(Scope::kGroup);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kLdmOverflow);
  CHECK(f->core() == 3);
  CHECK(markers_of(m, 0, MarkerKind::kCoreExit).size() == 4);
  CHECK(markers_of(m, 0, MarkerKind::kBarrier).empty());
}

TEST_CASE("a kernel catching std::exception cannot swallow the abort", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(256);
  int swallowed = 0;
  int rounds = 0;
  const auto f = trap_of(m.launch(LaunchSpec{}, [&swallowed, &rounds, x](Core& core) {
    if (core.id() == 0) {
      auto buf = core.ldm().alloc<std::uint32_t>(4);
      core.compute({.cycles = 50});
      core.get(buf, DevicePtr<const std::uint32_t>(x)).wait();  // parks at cycle 50: row 1 runs barriers meanwhile
      throw std::logic_error("bad state");
    }
    for (int i = 0; i < 100; ++i) {
      try {
        core.barrier(Scope::kRow);
        ++rounds;
      } catch (const std::exception&) {
        ++swallowed;
      }
    }
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kKernelException);
  CHECK(f->core() == 0);
  CHECK(f->cycle() == 50);
  CHECK(rounds > 0);  // row 1 really was inside its barrier loop when the fault hit
  CHECK(rounds < 20);
  CHECK(swallowed == 0);
}

TEST_CASE("join rethrows the first fault in (cycle, cg, core) order across groups", "[fault]") {
  const unsigned threads = GENERATE(1u, 2u);
  Machine m{tiny_groups(2), MachineOptions{.threads = threads}};
  const DeviceAddr x = m.allocate_bytes(256);
  SECTION("the earlier cycle wins even in a later group") {
    const auto f = trap_of(m.launch(LaunchSpec{.name = "two"}, [x](Core& core) {
      if (core.cg() == 0 && core.id() == 1) {
        core.compute({.cycles = 500});
        auto buf = core.ldm().alloc<std::uint16_t>(4);
        core.get(buf.first(3), DevicePtr<const std::uint16_t>(x)).wait();  // misaligned at cycle 500
      }
      if (core.cg() == 1 && core.id() == 3) {
        core.compute({.cycles = 100});
        throw std::runtime_error("late group, early cycle");
      }
    }));
    REQUIRE(f);
    CHECK(f->cg() == 1);
    CHECK(f->core() == 3);
    CHECK(f->cycle() == 100);
    CHECK(f->kind() == FaultKind::kKernelException);
    // Groups are independent: group 0 ran to its own fault, which its trace keeps.
    const auto g0 = markers_of(m, 0, MarkerKind::kFault);
    REQUIRE(g0.size() == 1);
    CHECK(g0[0].cycle == 500);
    CHECK(g0[0].core == 1);
    CHECK(g0[0].value == static_cast<std::uint32_t>(FaultKind::kDmaMisaligned));
    CHECK(markers_of(m, 1, MarkerKind::kFault).size() == 1);
  }
  SECTION("at equal cycles the lower cg wins, before the lower core") {
    const auto f = trap_of(m.launch(LaunchSpec{}, [](Core& core) {
      if ((core.cg() == 0 && core.id() == 3) || (core.cg() == 1 && core.id() == 0)) {
        core.compute({.cycles = 60});
        throw std::runtime_error("tie");
      }
    }));
    REQUIRE(f);
    CHECK(f->cg() == 0);
    CHECK(f->core() == 3);
    CHECK(f->cycle() == 60);
  }
}

TEST_CASE("the trace recorded before a fault is kept, with a fault marker", "[fault]") {
  Machine m{Arch::preset("tiny")};
  const DeviceAddr x = m.allocate_bytes(1024);
  const auto f = trap_of(m.launch(LaunchSpec{.name = "traced"}, [x](Core& core) {
    if (core.id() != 0) return;
    auto buf = core.ldm().alloc<std::uint32_t>(16);
    const DevicePtr<const std::uint32_t> src(x);
    core.get(buf, src).wait();
    core.compute({.cycles = 10});
    core.get(buf, src + 16).wait();
    core.compute({.cycles = 10});
    core.get(buf, src.byte_offset(2)).wait();  // traps at cycle 20
  }));
  REQUIRE(f);
  const TraceRecorder& t = *m.trace()[0];
  std::vector<DmaEvent> events;
  t.for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 3);
  CHECK(events[0].status == DmaStatus::kOk);
  CHECK(events[0].issue == 0);
  CHECK(events[0].main == x);
  CHECK(events[1].status == DmaStatus::kOk);
  CHECK(events[1].issue == 10);
  CHECK(events[1].main == x + 64);
  CHECK(events[2].status == DmaStatus::kTrapped);
  CHECK(events[2].issue == 20);
  CHECK(events[2].main == x + 2);
  const auto faults = markers_of(m, 0, MarkerKind::kFault);
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].cycle == 20);
  CHECK(faults[0].core == 0);
  CHECK(faults[0].value == static_cast<std::uint32_t>(FaultKind::kDmaMisaligned));
  CHECK(faults[0].text == f->what());
  const auto begins = markers_of(m, 0, MarkerKind::kLaunchBegin);
  REQUIRE(begins.size() == 1);
  CHECK(begins[0].text == "traced");
  CHECK(markers_of(m, 0, MarkerKind::kLaunchEnd).size() == 1);

  // The written trace file holds the same events and the fault marker.
  const auto file =
      std::filesystem::temp_directory_path() / ("ldmsim_fault_trace_" + std::to_string(::getpid()) + ".ldmtrace");
  m.write_trace(file, {{"fault", f->what()}});
  const auto back = TraceReader::read_all(file);
  std::filesystem::remove(file);
  REQUIRE(back.size() == 1);
  CHECK(back[0].markers() == t.markers());
  std::vector<DmaEvent> read_events;
  back[0].for_each_dma([&](const DmaEvent& e) { read_events.push_back(e); });
  CHECK(read_events == events);

  // Written without a fault in the run info, the header still says the run trapped (trace summary: "complete up to
  // the fault"), as stats.json gives the fault.
  m.write_trace(file);
  const nlohmann::json header = TraceReader(file).header();
  std::filesystem::remove(file);
  REQUIRE(header["fault"].is_object());
  CHECK(header["fault"]["kind"] == "dma-misaligned");
  CHECK(header["fault"]["cg"] == 0);
  CHECK(header["fault"]["core"] == 0);
  CHECK(header["fault"]["cycle"] == 20);
  CHECK(header["fault"]["kernel"] == "traced");
  CHECK(header["fault"]["message"] == f->detail());
}

TEST_CASE("destroying an unjoined faulted launch neither throws nor terminates", "[fault]") {
  Machine m{Arch::preset("tiny")};
  {
    Launch l = m.launch(LaunchSpec{}, [](Core& core) {
      if (core.id() == 1) throw std::runtime_error("dropped");
    });
  }
  CHECK_NOTHROW(m.launch(LaunchSpec{}, [](Core& core) { core.compute({.cycles = 1}); }).join());
  CHECK(m.stats().groups[0].launches == 2);
}
