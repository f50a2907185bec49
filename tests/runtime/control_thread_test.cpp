// Machine::run_control: the control core on the machine's first launch thread, so its launches need no handoff
// between host threads; the same simulated results as launches from the caller's thread, errors thrown to the caller,
// and a poll on the caller's thread while the control runs.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

void add_one(Core& core, DevicePtr<float> x, std::size_t n) {
  auto buf = core.ldm().alloc<float>(64);
  for (std::size_t i = static_cast<std::size_t>(core.id()) * 64; i < n;
       i += static_cast<std::size_t>(core.group_size()) * 64) {
    core.get(buf, DevicePtr<const float>(x + i)).wait();
    for (auto& v : buf) v += 1;
    core.compute({.flops = 64});
    core.put(x + i, buf).wait();
  }
}

struct Outcome {
  std::vector<float> values;
  RunStats stats;
  std::vector<std::vector<Marker>> markers;
};

/// Three launches of add_one on every group, from the caller's thread or as the control core.
Outcome three_launches(unsigned threads, bool as_control) {
  MachineOptions options;
  options.threads = threads;
  Machine m(Arch::preset("tiny"), options);
  const std::size_t n = 64 * 16;
  auto x = m.alloc<float>(n);
  m.upload(x, std::vector<float>(n, 1.0f));
  const auto work = [&] {
    for (int i = 0; i < 3; ++i) m.launch(LaunchSpec{.name = "add_one"}, add_one, x, n).join();
  };
  if (as_control) {
    m.run_control(work);
  } else {
    work();
  }
  Outcome out{std::vector<float>(n), m.stats(), {}};
  m.download(out.values, DevicePtr<const float>(x));
  for (const TraceRecorder* r : m.trace()) out.markers.push_back(r->markers());
  return out;
}

}  // namespace

TEST_CASE("the control core runs on a launch thread with the results of launches from the caller", "[launch]") {
  for (const unsigned threads : {1u, 2u}) {
    INFO(threads << " host threads");
    const Outcome from_caller = three_launches(threads, false), as_control = three_launches(threads, true);
    CHECK(as_control.values == std::vector<float>(64 * 16, 4.0f));
    CHECK(as_control.values == from_caller.values);
    CHECK(as_control.stats.cycles == from_caller.stats.cycles);
    CHECK(as_control.stats.dma_requests() == from_caller.stats.dma_requests());
    CHECK(as_control.markers == from_caller.markers);
  }
}

TEST_CASE("the control core is another host thread, polled from the caller, and its errors reach the caller",
          "[launch]") {
  Machine m(Arch::preset("tiny"));
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id control;
  std::atomic<bool> release{false};
  int polls = 0;
  bool polled_by_caller = true;
  m.run_control(
      [&] {
        control = std::this_thread::get_id();
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      [&] {
        ++polls;
        polled_by_caller = polled_by_caller && std::this_thread::get_id() == caller;
        release = true;  // the control returns once it has been polled
      },
      std::chrono::milliseconds(1));
  CHECK(control != caller);
  CHECK(polls >= 1);
  CHECK(polled_by_caller);

  // A nested call runs where it is, and what the control throws is thrown to the caller with its type.
  std::thread::id inner;
  m.run_control([&] { m.run_control([&] { inner = std::this_thread::get_id(); }); });
  CHECK(inner != caller);
  CHECK_THROWS_WITH(m.run_control([] { throw std::invalid_argument("bad plan"); }), "bad plan");
  try {
    m.run_control([&] {
      auto p = m.alloc<std::uint16_t>(64);
      m.launch(
           LaunchSpec{.name = "odd"},
           [](Core& core, DevicePtr<const std::uint16_t> q) {
             auto buf = core.ldm().alloc<std::uint16_t>(8);
             if (core.id() == 0) core.get(buf.first(3), q).wait();
           },
           DevicePtr<const std::uint16_t>(p))
          .join();
    });
    FAIL("expected a trap");
  } catch (const Fault& f) {
    CHECK(f.kind() == FaultKind::kDmaMisaligned);
    CHECK_THAT(std::string(f.what()), Catch::Contains("odd"));
  }
  // The machine goes on after both.
  m.run_control([&] { m.launch(LaunchSpec{.name = "empty"}, [](Core&) {}).join(); });
}

TEST_CASE("a poll that throws ends the control first, and the control cannot start during a launch", "[launch]") {
  Machine m(Arch::preset("tiny"));
  std::atomic<bool> finished{false};
  const auto control = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    m.launch(LaunchSpec{.name = "empty"}, [](Core&) {}).join();
    finished = true;
  };
  int polls = 0;
  CHECK_THROWS_WITH(m.run_control(
                        control,
                        [&] {
                          ++polls;
                          throw std::runtime_error("poll failed");
                        },
                        std::chrono::milliseconds(1)),
                    "poll failed");
  CHECK(finished);    // the control ran to its end before the poll's error came out
  CHECK(polls == 1);  // and was not polled again
  Launch running = m.launch(LaunchSpec{.name = "empty"}, [](Core&) {});
  CHECK_THROWS_AS(m.run_control([] {}), std::logic_error);
  running.join();
  m.run_control([] {});
}
