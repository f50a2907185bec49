// Register communication on hand-computed cases (tiny: 2x2 cores, latency 4, put 1, get 1, two buffered values;
// sw26010: 8x8): the value and its timing, row and column buses, broadcast to a row, a put that blocks on a full
// buffer until the receiver takes a value, a get no put answers (deadlock trap naming it), bad destinations and
// an arch without register communication.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "runtime/trap_of.hpp"

using namespace ldmsim;
using ldmsim::testing::trap_of;

namespace {

RegValue value_of(std::uint64_t x) {
  RegValue v;
  std::memcpy(v.bytes.data(), &x, sizeof x);
  return v;
}

std::uint64_t number_in(const RegValue& v) {
  std::uint64_t x = 0;
  std::memcpy(&x, v.bytes.data(), sizeof x);
  return x;
}

}  // namespace

TEST_CASE("a row put reaches the row's receiver latency cycles later", "[regcomm]") {
  Machine m{Arch::preset("tiny")};
  std::vector<std::uint64_t> got(4, 0);
  std::vector<Cycle> at(4, 0);
  m.launch(LaunchSpec{.name = "row"}, [&](Core& core) {
     if (core.id() == 0) {
       core.compute({.cycles = 20});
       core.reg_put(RegBus::kRow, 1, value_of(42));  // 20 + 1; receivable from 25
     } else if (core.id() == 1) {
       got[1] = number_in(core.reg_get(RegBus::kRow));  // blocks from 0, takes it at 25, + 1
       at[1] = core.cycle();
     } else if (core.id() == 2) {
       core.reg_put(RegBus::kCol, 0, value_of(7));  // column bus: row 1 -> row 0 of column 0 (core 0)
     }
     if (core.id() == 0) {
       core.compute({.cycles = 100});
       got[0] = number_in(core.reg_get(RegBus::kCol));  // long arrived: 121 + 1
       at[0] = core.cycle();
     }
   }).join();
  CHECK(got[1] == 42);
  CHECK(at[1] == 26);
  CHECK(got[0] == 7);
  CHECK(at[0] == 122);
}

TEST_CASE("a row broadcast reaches every other core of the row", "[regcomm]") {
  Machine m{Arch::preset("sw26010")};  // latency 10
  std::vector<std::uint64_t> got(64, 0);
  std::vector<Cycle> at(64, 0);
  m.launch(LaunchSpec{.name = "bcast"}, [&](Core& core) {
     if (core.row() != 2) return;
     if (core.col() == 3) {
       core.reg_put(RegBus::kRow, 8, value_of(99));  // 8 = all of the row
     } else {
       got[static_cast<std::size_t>(core.id())] = number_in(core.reg_get(RegBus::kRow));
       at[static_cast<std::size_t>(core.id())] = core.cycle();
     }
   }).join();
  for (int col = 0; col < 8; ++col) {
    if (col == 3) continue;
    CHECK(got[static_cast<std::size_t>(16 + col)] == 99);
    CHECK(at[static_cast<std::size_t>(16 + col)] == 1 + 10 + 1);
  }
}

TEST_CASE("a put into a full buffer waits until the receiver takes a value", "[regcomm]") {
  Machine m{Arch::preset("tiny")};  // two buffered values
  std::vector<Cycle> put_done(3, 0);
  std::vector<std::uint64_t> got;
  m.launch(LaunchSpec{.name = "full"}, [&](Core& core) {
     if (core.id() == 0) {
       for (std::uint64_t i = 0; i < 3; ++i) {
         core.reg_put(RegBus::kRow, 1, value_of(i));
         put_done[i] = core.cycle();
       }
     } else if (core.id() == 1) {
       core.compute({.cycles = 100});
       for (int i = 0; i < 3; ++i) got.push_back(number_in(core.reg_get(RegBus::kRow)));
     }
   }).join();
  CHECK(put_done[0] == 1);
  CHECK(put_done[1] == 2);
  CHECK(put_done[2] == 101);  // issued at 2..3, then waits for the entry the first get (100 + 1) frees
  CHECK(got == std::vector<std::uint64_t>{0, 1, 2});
}

TEST_CASE("a long stream through a buffer that never drains arrives whole and in order", "[regcomm]") {
  Machine m{Arch::preset("tiny")};  // two buffered values: the sender keeps the queue from ever emptying
  constexpr std::uint64_t kValues = 500;
  std::vector<std::uint64_t> got;
  m.launch(LaunchSpec{.name = "stream"}, [&](Core& core) {
     if (core.id() == 0) {
       for (std::uint64_t i = 0; i < kValues; ++i) core.reg_put(RegBus::kRow, 1, value_of(i));
     } else if (core.id() == 1) {
       core.compute({.cycles = 100});
       for (std::uint64_t i = 0; i < kValues; ++i) got.push_back(number_in(core.reg_get(RegBus::kRow)));
     }
   }).join();
  std::vector<std::uint64_t> expected(kValues);
  for (std::uint64_t i = 0; i < kValues; ++i) expected[i] = i;
  CHECK(got == expected);
}

TEST_CASE("a register get that no put answers is a deadlock naming the waiting core", "[regcomm][fault]") {
  Machine m{Arch::preset("tiny")};
  const auto f = trap_of(m.launch(LaunchSpec{.name = "lonely"}, [](Core& core) {
    if (core.id() == 3) core.reg_get(RegBus::kCol);
  }));
  REQUIRE(f);
  CHECK(f->kind() == FaultKind::kDeadlock);
  CHECK_THAT(std::string(f->what()),
             Catch::Contains("core 3 (row 1, col 1): waiting since cycle 0 for a value on its register column bus "
                             "that no core sent (a get with no matching put)"));
}

TEST_CASE("register puts to themselves, out of the row or on an arch without the buses trap", "[regcomm][fault]") {
  Machine tiny{Arch::preset("tiny")};
  auto self = trap_of(tiny.launch(LaunchSpec{.name = "self"}, [](Core& core) {
    if (core.id() == 0) core.reg_put(RegBus::kRow, 0, {});
  }));
  REQUIRE(self);
  CHECK(self->kind() == FaultKind::kInvalidArgument);
  CHECK_THAT(std::string(self->what()), Catch::Contains("register row put to 0 from column 0"));
  auto far = trap_of(tiny.launch(LaunchSpec{.name = "far"}, [](Core& core) {
    if (core.id() == 0) core.reg_put(RegBus::kCol, 3, {});
  }));
  REQUIRE(far);
  CHECK_THAT(std::string(far->what()), Catch::Contains("(0..1) or 2 for all of them"));
  Machine pro{Arch::preset("sw26010pro")};
  auto none = trap_of(pro.launch(LaunchSpec{.name = "none"}, [](Core& core) {
    if (core.id() == 0) core.reg_put(RegBus::kRow, 1, {});
  }));
  REQUIRE(none);
  CHECK_THAT(std::string(none->what()), Catch::Contains("not available on arch 'sw26010pro'"));
}

TEST_CASE("a value no core received and a barrier a fault left half passed do not reach the next launch",
          "[regcomm][launch]") {
  Machine m{Arch::preset("tiny")};
  // The first launch leaves a value in core 1's row buffer and cores 2 and 3 at a group barrier when core 0 traps.
  const DeviceAddr x = m.allocate_bytes(64, {.alignment = 64});
  const auto first = trap_of(m.launch(LaunchSpec{.name = "leaves"}, [x](Core& core) {
    if (core.id() == 0) {
      core.reg_put(RegBus::kRow, 1, value_of(111));
      core.compute({.cycles = 50});
      auto buf = core.ldm().alloc<std::byte>(64);
      core.get(buf, DevicePtr<const std::byte>(x)).wait();  // a sync point: cores 2 and 3 reach the barrier first
      throw std::runtime_error("stop here");
    }
    if (core.id() >= 2) core.barrier();
  }));
  REQUIRE(first);
  CHECK(first->kind() == FaultKind::kKernelException);
  // The next launch sees only its own value, and its barrier needs all four cores again.
  std::uint64_t got = 0;
  Cycle start = 0, released = 0;
  m.launch(LaunchSpec{.name = "fresh"}, [&](Core& core) {
     if (core.id() == 0) start = core.cycle();
     if (core.id() == 0) core.reg_put(RegBus::kRow, 1, value_of(222));
     if (core.id() == 1) got = number_in(core.reg_get(RegBus::kRow));
     if (core.id() == 3) core.compute({.cycles = 30});
     core.barrier();
     if (core.id() == 0) released = core.cycle();
   }).join();
  CHECK(got == 222);
  CHECK(released >= start + 30);  // waited for core 3
}
