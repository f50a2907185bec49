#include <simd.h>
#include <slave.h>

extern unsigned long fma_cycles[], mixed_cycles[], scalar_cycles[], divide_cycles[];
extern double result[];

__thread_local double ones[4] __attribute__((aligned(32))) = {0.5, 0.5, 0.5, 0.5};

void simd_charge(void) {
  doublev4 acc = 0, a = 0.5, b = 0.25, v;
  unsigned long t0 = rtc();
  for (int i = 0; i < 1000; ++i) acc = simd_vmad(a, b, acc);
  unsigned long t1 = rtc();
  doublev4 loaded = 0;
  for (int i = 0; i < 1500; ++i) {
    simd_load(v, ones);
    loaded = loaded + v;
  }
  unsigned long t2 = rtc();
  double s = 0;
  for (int i = 0; i < 1000; ++i) s += i * 0.5;
  unsigned long t3 = rtc();
  doublev4 q = 1.0;
  for (int i = 0; i < 10; ++i) q = q / a;
  unsigned long t4 = rtc();
  divide_cycles[_MYID] = t4 - t3;
  fma_cycles[_MYID] = t1 - t0;
  mixed_cycles[_MYID] = t2 - t1;
  scalar_cycles[_MYID] = t3 - t2;
  result[_MYID] = simd_reduc_plusd(acc) + simd_reduc_plusd(loaded) + (s == 249750.0 ? 0 : 1) + (q[0] == 1024.0 ? 0 : 1);
}
