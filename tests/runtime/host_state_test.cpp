// Host state: one instance per type and set, made on first use. A Machine's (the control core's) is its own, shared
// with its group views and with no other machine; the compute cores' (Core::group_state) is one set per host thread of
// a launch, shared by every core that thread runs, kept across launches and shared with group views.
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

struct Counter {
  int value = 0;
};
struct Other {
  int value = 0;
};

Arch groups(unsigned count) {
  Arch a = Arch::preset("tiny");
  a.core_groups = count;
  return a;
}

}  // namespace

TEST_CASE("a host state set makes each type once, on first use", "[runtime][host_state]") {
  HostState state;
  CHECK(state.find<Counter>() == nullptr);
  Counter& counter = state.get<Counter>();
  counter.value = 3;
  CHECK(&state.get<Counter>() == &counter);
  CHECK(state.find<Counter>() == &counter);
  CHECK(state.find<Other>() == nullptr);  // another type has its own slot
  CHECK(state.get<Other>().value == 0);
  CHECK(state.get<Counter>().value == 3);
}

TEST_CASE("a machine's host state is its own and shared with its group views", "[runtime][host_state]") {
  Machine m(groups(2)), other(groups(2));
  CHECK(m.find_host_state<Counter>() == nullptr);
  m.host_state<Counter>().value = 5;
  REQUIRE(m.find_host_state<Counter>() != nullptr);
  CHECK(m.find_host_state<Counter>()->value == 5);
  CHECK(other.find_host_state<Counter>() == nullptr);
  CHECK(other.host_state<Counter>().value == 0);
  const auto view = m.group_view({1});
  CHECK(&view->host_state<Counter>() == &m.host_state<Counter>());
}

TEST_CASE("the cores' host state is one set per host thread, kept across launches and shared with group views",
          "[runtime][host_state]") {
  for (const unsigned threads : {1u, 2u}) {
    INFO(threads << " host threads");
    Machine m(groups(4), MachineOptions{.threads = threads});
    std::mutex mutex;  // the sets are the threads' own; only this record of them is shared
    std::set<const Counter*> seen;
    const auto record = [&](Core& core) {
      ++core.group_state<Counter>().value;  // no lock: no other thread uses this set
      const std::lock_guard lock(mutex);
      seen.insert(&core.group_state<Counter>());
    };
    m.launch(AllGroups, record).join();
    m.group_view({1, 3})->launch(AllGroups, record).join();
    m.launch(AllGroups, record).join();
    // One set per thread, the same ones in every launch and view (a thread may find every group taken by the other
    // before it starts, so two threads may have used one set).
    CHECK(seen.size() >= 1);
    CHECK(seen.size() <= threads);
    int total = 0;
    for (const Counter* counter : seen) total += counter->value;
    CHECK(total == 10 * static_cast<int>(m.arch().cores_per_group()));  // 4 + 2 + 4 groups' cores
    Machine other(groups(4), MachineOptions{.threads = threads});
    other
        .launch(AllGroups,
                [&](Core& core) {
                  const std::lock_guard lock(mutex);
                  CHECK(seen.count(&core.group_state<Counter>()) == 0);  // another machine's are its own
                })
        .join();
  }
}
