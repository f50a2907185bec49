#include <simd.h>
#include <slave.h>

#define N 256

extern double in[], out[];
extern unsigned long aligned_cycles[], shifted_cycles[];

void stencil3(void) {
  double* a = (double*)ldm_malloc(N * sizeof(double));
  double* b = (double*)ldm_malloc(N * sizeof(double));
  volatile int reply = 0;
  int c, id = _MYID;
  doublev4 left, mid, right;
  unsigned long t0, t1, t2;

  athread_get(PE_MODE, &in[id * N], a, N * sizeof(double), (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  t0 = athread_time_cycle();
  for (c = 4; c < N - 4; c += 4) { /* the same work on aligned neighbours (a wider stencil) */
    simd_load(left, &a[c - 4]);
    simd_load(mid, &a[c]);
    simd_load(right, &a[c + 4]);
    simd_store(left + 2.0 * mid + right, &b[c]);
  }
  t1 = athread_time_cycle();
  for (c = 4; c < N - 4; c += 4) {
    simd_load(left, &a[c - 1]); /* @misaligned: the first misaligned access of each core */
    simd_load(mid, &a[c]);
    simd_load(right, &a[c + 1]);
    simd_store(left + 2.0 * mid + right, &b[c]);
  }
  t2 = athread_time_cycle();
  aligned_cycles[id] = t1 - t0;
  shifted_cycles[id] = t2 - t1;
  athread_put(PE_MODE, b, &out[id * N], N * sizeof(double), (void*)&reply, 0, 0);
  while (reply != 2) {
  }
  ldm_free(a, N * sizeof(double));
  ldm_free(b, N * sizeof(double));
}
