/* STREAM (copy, scale, add, triad) on the compute cores of one core group, written against athread as on
 * SW26010; the control core checks every array against a host reference. */
#include <athread.h>
#include <stdio.h>

#include "stream.h"

double a[STREAM_N], b[STREAM_N], c[STREAM_N];
double scalar = 3.0;

extern SLAVE_FUN(stream_copy)();
extern SLAVE_FUN(stream_scale)();
extern SLAVE_FUN(stream_add)();
extern SLAVE_FUN(stream_triad)();

int main(void) {
  static double ra[STREAM_N], rb[STREAM_N], rc[STREAM_N];
  for (int i = 0; i < STREAM_N; ++i) {
    a[i] = ra[i] = 1.0 + i % 7;
    b[i] = rb[i] = 2.0;
    c[i] = rc[i] = 0.0;
  }
  athread_init();
  athread_spawn(stream_copy, 0);
  athread_join();
  athread_spawn(stream_scale, 0);
  athread_join();
  athread_spawn(stream_add, 0);
  athread_join();
  athread_spawn(stream_triad, 0);
  athread_join();
  for (int i = 0; i < STREAM_N; ++i) rc[i] = ra[i];
  for (int i = 0; i < STREAM_N; ++i) rb[i] = scalar * rc[i];
  for (int i = 0; i < STREAM_N; ++i) rc[i] = ra[i] + rb[i];
  for (int i = 0; i < STREAM_N; ++i) ra[i] = rb[i] + scalar * rc[i];
  int errors = 0;
  for (int i = 0; i < STREAM_N; ++i) errors += a[i] != ra[i] || b[i] != rb[i] || c[i] != rc[i];
  printf("STREAM %s: %d mismatches, %lu simulated cycles\n", errors == 0 ? "ok" : "FAILED", errors,
         athread_host_cycles());
  athread_halt();
  return errors == 0 ? 0 : 1;
}
