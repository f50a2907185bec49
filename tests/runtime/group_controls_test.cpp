// Machine::run_group_controls: the control cores of several core groups at once, each launching on a view of its
// own group and allocating in its memory. The simulated results, the addresses handed out and the trace are those
// of running the controls one after another, for any number of host threads; every control runs, and the first
// error in the controls' order is thrown.
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

constexpr int kGroups = 4;
constexpr std::size_t kValues = 64 * 16;

/// x += ones, 64 values at a time (ones: 64 values, in group 0's memory: the other groups read them remotely).
void add_ones(Core& core, DevicePtr<float> x, DevicePtr<const float> ones, std::size_t n) {
  auto buf = core.ldm().alloc<float>(64);
  auto add = core.ldm().alloc<float>(64);
  core.get(add, ones).wait();
  for (std::size_t i = static_cast<std::size_t>(core.id()) * 64; i < n;
       i += static_cast<std::size_t>(core.group_size()) * 64) {
    core.get(buf, DevicePtr<const float>(x + i)).wait();
    for (std::size_t k = 0; k < buf.size(); ++k) buf[k] += add[k];
    core.compute({.flops = 64});
    core.put(x + i, buf).wait();
  }
}

Arch four_groups() {
  Arch arch = Arch::preset("tiny");
  arch.core_groups = kGroups;
  return arch;
}

/// A machine of four groups on `threads` host threads, with a view of each group.
struct ViewedMachine {
  explicit ViewedMachine(unsigned threads) : machine(four_groups(), MachineOptions{.threads = threads}) {
    for (int g = 0; g < kGroups; ++g) views.push_back(machine.group_view({g}));
  }
  Machine& view(int g) { return *views[static_cast<std::size_t>(g)]; }
  Machine machine;
  std::vector<std::unique_ptr<Machine>> views;
};

struct Outcome {
  std::vector<std::vector<float>> values;
  nlohmann::json stats;
  std::vector<std::vector<Marker>> markers;
  std::vector<DeviceAddr> scratch;
};

/// Group g's control allocates a scratch region in its memory, launches add_ones g + 1 times on its data there
/// (reading the ones from group 0's memory while group 0's control allocates and frees) and frees the scratch.
Outcome per_group_work(unsigned threads, bool as_control) {
  ViewedMachine vm(threads);
  Machine& m = vm.machine;
  const auto ones = m.alloc<float>(64);
  m.upload(ones, std::vector<float>(64, 1.0f));
  std::vector<DevicePtr<float>> data;
  for (int g = 0; g < kGroups; ++g) {
    data.push_back(m.alloc<float>(kValues, AllocOptions{.cg = g}));
    m.upload(data.back(), std::vector<float>(kValues, static_cast<float>(g)));
  }
  Outcome out;
  out.scratch.assign(kGroups, 0);
  std::vector<int> groups;
  std::vector<std::function<void()>> controls;
  for (int g = 0; g < kGroups; ++g) {
    groups.push_back(g);
    controls.push_back([&, g] {
      Machine& view = vm.view(g);
      const auto scratch = view.alloc<float>(64 * static_cast<std::size_t>(g + 1));
      out.scratch[static_cast<std::size_t>(g)] = scratch.addr();
      for (int i = 0; i <= g; ++i) {
        view.launch(LaunchSpec{.name = "add_ones"}, add_ones, data[static_cast<std::size_t>(g)],
                    DevicePtr<const float>(ones), kValues)
            .join();
      }
      view.free(scratch);
    });
  }
  const auto work = [&] { m.run_group_controls(groups, std::move(controls)); };
  if (as_control) {
    m.run_control(work);
  } else {
    work();
  }
  for (int g = 0; g < kGroups; ++g) {
    out.values.emplace_back(kValues);
    m.download(out.values.back(), DevicePtr<const float>(data[static_cast<std::size_t>(g)]));
  }
  out.stats = m.stats().to_json();
  for (const TraceRecorder* r : m.trace()) out.markers.push_back(r->markers());
  return out;
}

}  // namespace

TEST_CASE("group controls give the results of one control running them in turn", "[launch][group_controls]") {
  const Outcome one = per_group_work(1, false);
  for (int g = 0; g < kGroups; ++g) {
    CHECK(one.values[static_cast<std::size_t>(g)] == std::vector<float>(kValues, static_cast<float>(2 * g + 1)));
  }
  // Each group's clock counts only its own launches.
  CHECK(one.stats["groups"][0]["cycles"].get<std::uint64_t>() < one.stats["groups"][3]["cycles"].get<std::uint64_t>());
  for (const unsigned threads : {1u, 2u, 3u}) {
    for (const bool as_control : {false, true}) {
      if (threads == 1 && !as_control) continue;
      INFO("threads " << threads << (as_control ? ", as the control core" : ", from the caller"));
      const Outcome other = per_group_work(threads, as_control);
      CHECK(other.values == one.values);
      CHECK(other.stats == one.stats);
      CHECK(other.markers == one.markers);
      CHECK(other.scratch == one.scratch);
    }
  }
}

TEST_CASE("every group control runs and the first error in their order is thrown", "[launch][group_controls]") {
  for (const unsigned threads : {1u, 2u}) {
    INFO("threads " << threads);
    ViewedMachine vm(threads);
    Machine& m = vm.machine;
    std::atomic<int> ran{0};
    std::vector<std::function<void()>> controls;
    for (int g = 0; g < kGroups; ++g) {
      controls.push_back([&, g] {
        vm.view(g).launch(LaunchSpec{.name = "empty"}, [](Core&) {}).join();
        ++ran;
        if (g == 1) throw ConfigError("control of group 1 failed");
        if (g == 3) throw std::runtime_error("control of group 3 failed");
      });
    }
    REQUIRE_THROWS_WITH(m.run_group_controls({0, 1, 2, 3}, std::move(controls)), "control of group 1 failed");
    CHECK(ran == kGroups);
    // The machine is idle again: the caller allocates and launches as before.
    const auto x = m.alloc<float>(kValues);
    m.launch(LaunchSpec{.name = "add_ones"}, add_ones, x, DevicePtr<const float>(x), kValues).join();
  }
}

TEST_CASE("a group control that launches on another group, or nests, is refused", "[launch][group_controls]") {
  for (const unsigned threads : {1u, 2u}) {
    INFO("threads " << threads);
    ViewedMachine vm(threads);
    std::atomic<int> finished{0};
    const auto empty = [](Core& core) { core.compute({.cycles = 3}); };
    std::vector<std::function<void()>> controls;
    // Group 0's control launches on group 1 (another thread's with two) and on group 2 (the same thread's).
    controls.push_back([&] {
      CHECK_THROWS_AS(vm.view(1).launch(LaunchSpec{.name = "other"}, empty), std::logic_error);
      CHECK_THROWS_AS(vm.view(2).launch(LaunchSpec{.name = "other"}, empty), std::logic_error);
      CHECK_THROWS_AS(vm.machine.run_group_controls({3}, {[] {}}), std::logic_error);
      ++finished;
    });
    // Group 1's own launch, meanwhile, runs undisturbed.
    controls.push_back([&] {
      vm.view(1).launch(LaunchSpec{.name = "own"}, empty).join();
      ++finished;
    });
    vm.machine.run_group_controls({0, 1}, std::move(controls));
    CHECK(finished == 2);
    CHECK(vm.machine.group_clock(0) == 0);
    CHECK(vm.machine.group_clock(1) == 3);
    CHECK(vm.machine.group_clock(2) == 0);
    vm.machine.launch(LaunchSpec{.name = "all"}, empty).join();  // nothing was left running
  }
}

TEST_CASE("group controls are refused a group listed twice or a count that does not match",
          "[launch][group_controls]") {
  Machine m(four_groups());
  std::vector<std::function<void()>> two(2, [] {});
  CHECK_THROWS_AS(m.run_group_controls({1, 1}, two), ConfigError);
  CHECK_THROWS_AS(m.run_group_controls({1}, two), std::invalid_argument);
  CHECK_THROWS_AS(m.run_group_controls({0, 4}, two), ConfigError);
}

TEST_CASE("a launch a group control leaves unjoined has run when the controls return", "[launch][group_controls]") {
  // Moved out of its control, the launch is joined by the caller afterwards: by then it has run, on its control's
  // thread, and its fault is the caller's to see.
  for (const unsigned threads : {1u, 2u}) {
    INFO("threads " << threads);
    ViewedMachine vm(threads);
    Machine& m = vm.machine;
    const auto x = m.alloc<float>(kValues, AllocOptions{.cg = 1});
    m.upload(x, std::vector<float>(kValues, 2.0f));
    std::vector<Launch> escaped(2);
    std::vector<std::function<void()>> controls;
    controls.push_back([&] {
      escaped[0] = vm.view(0).launch(LaunchSpec{.name = "overrun"}, [](Core& core) {
        auto buf = core.ldm().alloc<float>(64);
        core.get(buf, DevicePtr<const float>(DeviceAddr{1} << 50)).wait();  // no region there: a fault
      });
    });
    controls.push_back([&] {
      escaped[1] = vm.view(1).launch(LaunchSpec{.name = "add_ones"}, add_ones, x, DevicePtr<const float>(x), kValues);
    });
    m.run_group_controls({0, 1}, std::move(controls));
    CHECK(m.group_clock(1) > 0);  // ran before the controls returned
    CHECK_THROWS_AS(escaped[0].join(), Fault);
    escaped[1].join();
    std::vector<float> values(kValues);
    m.download(values, DevicePtr<const float>(x));
    CHECK(values == std::vector<float>(kValues, 4.0f));
    m.launch(LaunchSpec{.name = "all"}, [](Core& core) { core.compute({.cycles = 3}); }).join();  // machine idle
  }
}
