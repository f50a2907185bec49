/* Corpus: kernels that define their own cycle-counter helper named rtc (a function taking a pointer, written over
 * `rcsr`, a local variable of the same name inside) or RTC, next to slave.h's zero-argument rtc(). Every helper
 * must read simulated cycles: the timed get and put take some, and the SDK-style rtc() interval spans both. */
#include <athread.h>
#include <stdio.h>

#define CORES 64
#define N 256

double in[CORES * N], out[CORES * N];
unsigned long get_cycles[CORES], put_cycles[CORES], sdk_cycles[CORES];

extern SLAVE_FUN(timed_scale)();

int main(void) {
  int i, bad = 0;
  for (i = 0; i < CORES * N; i++) in[i] = i % 17;
  athread_init();
  athread_spawn(timed_scale, 0);
  athread_join();
  athread_halt();
  for (i = 0; i < CORES * N; i++) bad += out[i] != 2.0 * (i % 17);
  for (i = 0; i < CORES; i++) {
    bad += get_cycles[i] == 0 || put_cycles[i] == 0;
    bad += sdk_cycles[i] < get_cycles[i] + put_cycles[i]; /* the SDK-style rtc() spans both */
  }
  printf("own_rtc %s: %d mismatches, get %lu cycles, put %lu cycles\n", bad ? "FAILED" : "ok", bad, get_cycles[0],
         put_cycles[0]);
  return bad != 0;
}
