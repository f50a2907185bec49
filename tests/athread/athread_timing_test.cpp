// Simulated-time semantics of spin-waited athread DMA: requests on disjoint buffers overlap, a put starts
// after the gets before it, and explicit waits charge exactly the requests on their counter.
#include <array>
#include <catch2/catch.hpp>

#include "athread.h"
#include "dma.h"
#include "slave.h"

namespace {

std::array<double, 4 * 512> g_in;
std::array<double, 512> g_out;
unsigned long g_one = 0, g_three = 0, g_get_put = 0;

void spin(volatile int& reply, int n) {
  while (reply != n) {
  }
}

extern "C" void slave_timing(void*) {
  if (_MYID != 0) return;
  auto* b0 = static_cast<double*>(ldm_malloc(512 * sizeof(double)));
  auto* b1 = static_cast<double*>(ldm_malloc(512 * sizeof(double)));
  auto* b2 = static_cast<double*>(ldm_malloc(512 * sizeof(double)));
  volatile int reply = 0;
  const int bytes = 512 * sizeof(double);
  unsigned long t = athread_time_cycle();
  athread_get(PE_MODE, g_in.data(), b0, bytes, &reply, 0, 0, 0);
  spin(reply, 1);
  g_one = athread_time_cycle() - t;

  t = athread_time_cycle();
  athread_get(PE_MODE, g_in.data() + 512, b0, bytes, &reply, 0, 0, 0);
  athread_get(PE_MODE, g_in.data() + 1024, b1, bytes, &reply, 0, 0, 0);
  athread_get(PE_MODE, g_in.data() + 1536, b2, bytes, &reply, 0, 0, 0);
  spin(reply, 4);
  g_three = athread_time_cycle() - t;

  t = athread_time_cycle();
  athread_get(PE_MODE, g_in.data(), b0, bytes, &reply, 0, 0, 0);
  spin(reply, 5);
  for (int i = 0; i < 512; ++i) b1[i] = 2 * b0[i];
  athread_put(PE_MODE, b1, g_out.data(), bytes, &reply, 0, 0);
  spin(reply, 6);
  g_get_put = athread_time_cycle() - t;
  ldm_free(b2, 0);
  ldm_free(b1, 0);
  ldm_free(b0, 0);
}

}  // namespace

TEST_CASE("spin-waited DMA is charged: disjoint gets overlap, a put waits for the gets before it", "[athread]") {
  for (std::size_t i = 0; i < g_in.size(); ++i) g_in[i] = static_cast<double>(i);
  REQUIRE(athread_init() == 0);
  __ldmsim_athread_spawn(slave_timing, nullptr, "timing");
  athread_join();
  CHECK(g_out[7] == 14.0);
  INFO("one get " << g_one << ", three gets " << g_three << ", get then put " << g_get_put);
  CHECK(g_one > 0);
  CHECK(g_three > g_one);
  CHECK(g_three < 3 * g_one);            // the three requests overlapped
  CHECK(g_get_put > g_one + g_one / 2);  // the put was issued after the get completed
}
