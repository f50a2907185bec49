// Machine::reset: after it, a machine simulates exactly as a new one of the same arch would (same addresses,
// cycles, stats and trace bytes), while its host resources stay; it is refused during a launch and on views.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "support/temp_dir.hpp"

using namespace ldmsim;

namespace {

std::string bytes_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Outcome {
  std::vector<DeviceAddr> addresses;
  std::vector<std::uint32_t> out;
  nlohmann::json stats;
  std::string trace;
};

/// Allocates in two groups, uploads, runs a get/add/put kernel twice (remote and local memory) and a node
/// barrier, and records everything a run leaves.
Outcome run_once(Machine& m, const std::filesystem::path& trace_file) {
  constexpr std::size_t n = 2048;
  Outcome o;
  auto x = m.alloc<std::uint32_t>(n, AllocOptions{.cg = 1, .name = "x"});
  auto y = m.alloc<std::uint32_t>(n, AllocOptions{.cg = 0, .name = "y"});
  o.addresses = {x.addr(), y.addr()};
  std::vector<std::uint32_t> init(n);
  for (std::size_t i = 0; i < n; ++i) init[i] = static_cast<std::uint32_t>(3 * i + 1);
  m.upload(x, init);
  const auto kernel = [&](Core& core, DevicePtr<const std::uint32_t> from) {
    auto buf = core.ldm().alloc<std::uint32_t>(32);
    for (std::size_t i = static_cast<std::size_t>(core.rank()) * 32; i < n;
         i += static_cast<std::size_t>(core.group_size()) * 32) {
      core.get(buf, from + i).wait();
      for (auto& v : buf) v += static_cast<std::uint32_t>(core.id());
      core.compute({.cycles = 7});
      core.put(y + i, LdmSpan<const std::uint32_t>(buf)).wait();
    }
    core.barrier(Scope::kNode);
  };
  m.launch(LaunchSpec{.name = "pass1", .node_sync = true}, kernel, DevicePtr<const std::uint32_t>(x)).join();
  m.launch(LaunchSpec{.name = "pass2", .node_sync = true}, kernel, DevicePtr<const std::uint32_t>(y)).join();
  o.out.resize(n);
  m.download(o.out, DevicePtr<const std::uint32_t>(y));
  o.stats = m.stats().to_json();
  m.write_trace(trace_file);
  o.trace = bytes_of(trace_file);
  return o;
}

Arch two_groups() {
  Arch a = Arch::preset("tiny");
  a.core_groups = 2;
  // A timing model with state (the engine's queue): a reset must clear it too.
  a.dma.timing = {{"model", "fcfs-bandwidth"}, {"issue_cycles", 5}, {"latency_cycles", 50}, {"bytes_per_cycle", 16}};
  return Arch::from_json(a.to_json(), "test");
}

}  // namespace

TEST_CASE("after reset a machine simulates exactly as a new one", "[machine][reset]") {
  test::TempDir dir("reset");
  const unsigned threads = GENERATE(1u, 2u);
  CAPTURE(threads);
  const MachineOptions options{.threads = threads, .trace = true};
  Machine fresh{two_groups(), options};
  const Outcome expected = run_once(fresh, dir / "fresh.ldmtrace");

  Machine reused{two_groups(), options};
  (void)run_once(reused, dir / "first.ldmtrace");
  REQUIRE(reused.stats().cycles > 0);
  reused.reset();
  CHECK(reused.stats().cycles == 0);
  CHECK(reused.memory().regions().empty());
  const Outcome again = run_once(reused, dir / "again.ldmtrace");
  CHECK(again.addresses == expected.addresses);
  CHECK(again.out == expected.out);
  CHECK(again.stats == expected.stats);
  CHECK(again.trace == expected.trace);
}

TEST_CASE("reset is refused during a launch and on group views and shared-node contexts", "[machine][reset]") {
  Machine m{two_groups(), MachineOptions{.threads = 1}};
  Launch launch = m.launch(LaunchSpec{.name = "busy"}, [](Core& core) { core.compute({.cycles = 10}); });
  CHECK_THROWS_AS(m.reset(), std::logic_error);
  launch.join();
  const std::unique_ptr<Machine> view = m.group_view({1});
  CHECK_THROWS_WITH(view->reset(), Catch::Contains("group view"));
  ConcurrentMachine shared{two_groups(), {"a", "b"}};
  CHECK_THROWS_WITH(shared.context(0).reset(), Catch::Contains("shared node"));
  m.reset();  // the view is only a view: the machine itself resets
  CHECK(m.stats().cycles == 0);
}
