/* Corpus: broadcast gets into arrays on the slave stack, as blocked GEMM kernels keep their shared panel: core 0
 * fills every core's `coef` with one BCAST get, column 0 of each row fills its row's `row_scale` with a ROW get,
 * then every core scales its own tile with both. */
#include <athread.h>
#include <stdio.h>

#define CORES 64
#define K 16

double coef[K], row_scales[8 * K], x[CORES * K], y[CORES * K];

extern SLAVE_FUN(scale_by_shared)();

int main(void) {
  int i, k, bad = 0;
  for (k = 0; k < K; k++) coef[k] = k + 1;
  for (i = 0; i < 8 * K; i++) row_scales[i] = 1.0 + i / K;
  for (i = 0; i < CORES * K; i++) x[i] = i % 5;
  athread_init();
  athread_spawn(scale_by_shared, 0);
  athread_join();
  athread_halt();
  for (i = 0; i < CORES; i++) {
    for (k = 0; k < K; k++) {
      if (y[i * K + k] != x[i * K + k] * coef[k] * row_scales[(i / 8) * K + k]) bad++;
    }
  }
  printf("bcast_stack ok: %d mismatches\n", bad);
  return bad != 0;
}
