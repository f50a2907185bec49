// No process-wide state: two Machines in one process keep their own memory, clocks, stats and traces, whether
// their launches interleave on one control thread or run from two std::threads at once.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

/// y[i] = x[i] * mul + add on every core, tiles of 64 elements, charging `cost` cycles per tile.
void affine(Core& core, DevicePtr<const std::uint32_t> x, DevicePtr<std::uint32_t> y, std::size_t n, std::uint32_t mul,
            std::uint32_t add, Cycle cost) {
  auto buf = core.ldm().alloc<std::uint32_t>(64);
  for (std::size_t i = static_cast<std::size_t>(core.rank()) * 64; i < n;
       i += static_cast<std::size_t>(core.group_size()) * 64) {
    core.get(buf, x + i).wait();
    for (auto& v : buf) v = v * mul + add;
    core.compute({.cycles = cost});
    core.put(y + i, LdmSpan<const std::uint32_t>(buf)).wait();
  }
  core.barrier();
}

std::vector<std::uint32_t> iota(std::size_t n, std::uint32_t from) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from + static_cast<std::uint32_t>(i);
  return v;
}

Arch timed() {
  Arch a = Arch::preset("tiny");
  a.dma.timing = {{"model", "fcfs-bandwidth"}, {"issue_cycles", 5}, {"latency_cycles", 50}, {"bytes_per_cycle", 16}};
  return Arch::from_json(a.to_json(), "test");
}

/// One machine's whole session: three launches; returns the data and the stats JSON.
struct Session {
  std::vector<std::uint32_t> out;
  nlohmann::json stats;
};
Session session(std::uint32_t mul, Cycle cost) {
  Machine m{timed(), MachineOptions{.threads = 1}};
  constexpr std::size_t n = 4096;
  auto x = m.alloc<std::uint32_t>(n);
  auto y = m.alloc<std::uint32_t>(n);
  m.upload(x, iota(n, 1));
  for (int round = 0; round < 3; ++round) {
    m.launch(LaunchSpec{.name = "affine"}, affine, DevicePtr<const std::uint32_t>(round == 0 ? x : y), y, n, mul,
             std::uint32_t{1}, cost)
        .join();
  }
  Session s;
  s.out.resize(n);
  m.download(s.out, DevicePtr<const std::uint32_t>(y));
  s.stats = m.stats().to_json();
  return s;
}

}  // namespace

TEST_CASE("two machines interleave launches and keep separate memory, clocks and stats", "[machines]") {
  Machine a{timed()};
  Machine b{timed()};
  constexpr std::size_t n = 1024;
  auto xa = a.alloc<std::uint32_t>(n);
  auto xb = b.alloc<std::uint32_t>(n);
  CHECK(xa.addr() == xb.addr());  // deterministic addresses, separate address spaces
  a.upload(xa, iota(n, 0));
  b.upload(xb, iota(n, 1000));

  // a's first launch and b's launch are in flight at the same time.
  Launch la = a.launch(LaunchSpec{.name = "a1"}, affine, DevicePtr<const std::uint32_t>(xa), xa, n, 2u, 0u, Cycle{10});
  Launch lb = b.launch(LaunchSpec{.name = "b1"}, affine, DevicePtr<const std::uint32_t>(xb), xb, n, 3u, 0u, Cycle{500});
  lb.join();
  la.join();
  a.launch(LaunchSpec{.name = "a2"}, affine, DevicePtr<const std::uint32_t>(xa), xa, n, 1u, 5u, Cycle{10}).join();

  std::vector<std::uint32_t> out_a(n);
  std::vector<std::uint32_t> out_b(n);
  a.download(out_a, DevicePtr<const std::uint32_t>(xa));
  b.download(out_b, DevicePtr<const std::uint32_t>(xb));
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(out_a[i] == static_cast<std::uint32_t>(i) * 2 + 5);
    REQUIRE(out_b[i] == (1000 + static_cast<std::uint32_t>(i)) * 3);
  }
  const RunStats sa = a.stats();
  const RunStats sb = b.stats();
  CHECK(sa.groups[0].launches == 2);
  CHECK(sb.groups[0].launches == 1);
  CHECK(sa.dma_requests() == 2 * 2 * n / 64);
  CHECK(sb.dma_requests() == 2 * n / 64);
  CHECK(sb.cycles > sa.cycles);  // b charged 500 cycles per tile, a 10 (twice)
  auto begins = [](const Machine& m) {
    std::vector<std::string> names;
    for (const Marker& mk : m.trace()[0]->markers())
      if (mk.kind == MarkerKind::kLaunchBegin) names.push_back(mk.text);
    return names;
  };
  CHECK(begins(a) == std::vector<std::string>{"a1", "a2"});
  CHECK(begins(b) == std::vector<std::string>{"b1"});
}

TEST_CASE("a machine's results do not depend on another machine's history", "[machines]") {
  const Session alone = session(3, 7);
  Machine noise{timed()};
  auto z = noise.alloc<std::uint32_t>(8192);
  noise.upload(z, iota(8192, 9));
  noise.launch(LaunchSpec{}, affine, DevicePtr<const std::uint32_t>(z), z, std::size_t{8192}, 5u, 5u, Cycle{3}).join();
  const Session after = session(3, 7);
  CHECK(after.out == alone.out);
  CHECK(after.stats == alone.stats);
}

TEST_CASE("two machines driven from two std::threads at once give their serial results", "[machines]") {
  const Session ref1 = session(3, 7);
  const Session ref2 = session(5, 40);
  Session got1;
  Session got2;
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::thread t1([&] { got1 = session(3, 7); });
    std::thread t2([&] { got2 = session(5, 40); });
    t1.join();
    t2.join();
    CHECK(got1.out == ref1.out);
    CHECK(got1.stats == ref1.stats);
    CHECK(got2.out == ref2.out);
    CHECK(got2.stats == ref2.stats);
  }
  CHECK(ref1.out != ref2.out);
}
