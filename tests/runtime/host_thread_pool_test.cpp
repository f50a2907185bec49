// The host threads launches run on: each job once per thread index, on threads kept from job to job, one job at a
// time, fibers usable on them; and launches of a machine keep their host threads.
#include "../../runtime/src/host_thread_pool.hpp"  // white box: the node's launch threads

#include <atomic>
#include <boost/fiber/fiber.hpp>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using ldmsim::detail::HostThreadPool;

TEST_CASE("a host thread pool runs each job once per index, on the same threads every time", "[pool]") {
  HostThreadPool pool(3);
  REQUIRE(pool.size() == 3);
  std::vector<std::thread::id> first(3), second(3);
  std::vector<int> runs(3, 0);
  REQUIRE(pool.try_start(3, [&](std::size_t t) { first[t] = std::this_thread::get_id(), ++runs[t]; }));
  pool.wait();
  REQUIRE(pool.try_start(2, [&](std::size_t t) { second[t] = std::this_thread::get_id(), ++runs[t]; }));
  pool.wait();
  CHECK(runs == std::vector<int>{2, 2, 1});
  CHECK(std::set<std::thread::id>(first.begin(), first.end()).size() == 3);
  CHECK(first[0] != std::this_thread::get_id());
  CHECK(second[0] == first[0]);
  CHECK(second[1] == first[1]);
}

TEST_CASE("a host thread pool runs one job at a time", "[pool]") {
  HostThreadPool pool(1);
  std::atomic<bool> release{false};
  REQUIRE(pool.try_start(1, [&](std::size_t) {
    while (!release) std::this_thread::yield();
  }));
  CHECK_FALSE(pool.try_start(1, [](std::size_t) {}));  // busy: the caller must use threads of its own
  CHECK_FALSE(pool.try_start(2, [](std::size_t) {}));
  release = true;
  pool.wait();
  bool ran = false;
  REQUIRE(pool.try_start(1, [&](std::size_t) { ran = true; }));
  pool.wait();
  CHECK(ran);
}

TEST_CASE("fibers run on a host thread pool's threads", "[pool]") {
  HostThreadPool pool(2);
  std::atomic<int> sum{0};
  REQUIRE(pool.try_start(2, [&](std::size_t t) {
    std::vector<boost::fibers::fiber> fibers;
    for (int i = 1; i <= 4; ++i) fibers.emplace_back([&sum, i, t] { sum += i * static_cast<int>(t + 1); });
    for (auto& f : fibers) f.join();
  }));
  pool.wait();
  CHECK(sum == 10 + 20);
}

namespace {
/// A number no other thread of the process ever has (thread ids may be reused once a thread has exited).
int thread_token() {
  static std::atomic<int> next{1};
  thread_local const int token = next++;
  return token;
}
}  // namespace

TEST_CASE("a machine's launches run on the same host threads", "[pool]") {
  ldmsim::Machine m{ldmsim::Arch::preset("sw26010pro"), {.threads = 2}};
  std::mutex mutex;
  std::set<int> first, second;
  const auto record = [&](std::set<int>& into) {
    return [&into, &mutex](ldmsim::Core&) {
      const std::lock_guard lock(mutex);
      into.insert(thread_token());
    };
  };
  m.launch(ldmsim::AllGroups, record(first)).join();
  m.launch(ldmsim::AllGroups, record(second)).join();
  CHECK(first.size() == 2);
  CHECK(second == first);
}
