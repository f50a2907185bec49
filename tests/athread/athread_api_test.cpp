// The athread C API driven in-process from C++: reply counters, BCAST / ROW delivery, ldm_malloc buffers,
// spin-wait charging, barriers and athread_set_num_threads (the example programs cover the build path).
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>

#include "athread.h"
#include "slave.h"

namespace {

std::array<int, 256> g_src;
std::array<int, 64 * 8> g_dst;
std::array<long, 64> g_replies;
std::array<unsigned long, 64> g_cycles;

extern "C" void slave_bcast_row(void*) {
  int* buf = static_cast<int*>(ldm_malloc(8 * sizeof(int)));
  int* row = static_cast<int*>(ldm_malloc(8 * sizeof(int)));
  volatile int reply = 0;
  athread_syn(ARRAY_SCOPE, 0xffff);
  if (_MYID == 0) {
    athread_get(BCAST_MODE, g_src.data(), buf, 8 * sizeof(int), &reply, static_cast<char>(0xff), 0, 0);
    while (reply != 1) {
    }
  }
  if (_COL == 0) {
    athread_get(ROW_MODE, g_src.data() + 8 * (_ROW + 1), row, 8 * sizeof(int), &reply, 0, 0, 0);
    while (reply != (_MYID == 0 ? 2 : 1)) {
    }
  }
  athread_syn(ARRAY_SCOPE, 0xffff);
  for (int i = 0; i < 4; ++i) buf[i + 4] = row[i];
  const unsigned long t0 = athread_time_cycle();
  athread_put(PE_MODE, buf, g_dst.data() + 8 * _MYID, 8 * sizeof(int), &reply, 0, 0);
  while (reply < 1) {
  }
  g_cycles[static_cast<std::size_t>(_MYID)] = athread_time_cycle() - t0;
  g_replies[static_cast<std::size_t>(_MYID)] = reply;
  ldm_free(row, 8 * sizeof(int));
  ldm_free(buf, 8 * sizeof(int));
}

std::atomic<int> g_ran{0};
extern "C" void slave_count(void*) {
  ++g_ran;
}

}  // namespace

TEST_CASE("BCAST and ROW gets reach every core's ldm_malloc buffer and replies count per request", "[athread]") {
  for (std::size_t i = 0; i < g_src.size(); ++i) g_src[i] = static_cast<int>(i) * 10;
  g_dst.fill(-1);
  REQUIRE(athread_init() == 0);
  REQUIRE(athread_get_max_threads() == 64);
  __ldmsim_athread_spawn(slave_bcast_row, nullptr, "bcast_row");
  REQUIRE(athread_join() == 0);
  for (int core = 0; core < 64; ++core) {
    const int r = core / 8;
    for (int i = 0; i < 4; ++i) CHECK(g_dst[static_cast<std::size_t>(8 * core + i)] == 10 * i);
    for (int i = 0; i < 4; ++i) CHECK(g_dst[static_cast<std::size_t>(8 * core + 4 + i)] == 10 * (8 * (r + 1) + i));
    const long expected = core == 0 ? 3 : (core % 8 == 0 ? 2 : 1);
    CHECK(g_replies[static_cast<std::size_t>(core)] == expected);
    CHECK(g_cycles[static_cast<std::size_t>(core)] > 0);  // the spin-waited put was charged
  }
  CHECK(athread_host_cycles() > 0);
}

TEST_CASE("athread_set_num_threads limits the cores that run the slave function", "[athread]") {
  REQUIRE(athread_init() == 0);
  REQUIRE(athread_set_num_threads(65) == -1);
  REQUIRE(athread_set_num_threads(5) == 0);
  g_ran = 0;
  __ldmsim_athread_spawn(slave_count, nullptr, "count");
  athread_join();
  CHECK(g_ran == 5);
  REQUIRE(athread_set_num_threads(64) == 0);
  g_ran = 0;
  __ldmsim_athread_spawn(slave_count, nullptr, "count");
  athread_join();
  CHECK(g_ran == 64);
}
