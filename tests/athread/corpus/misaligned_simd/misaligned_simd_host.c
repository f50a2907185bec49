/* Corpus: a 3-point stencil that loads doublev4 at &a[c - 1] and &a[c + 1] with c % 4 == 0 from an ldm_malloc
 * buffer, as kernels run on hardware do. It must run and validate; the loop costs more than the same loop over
 * aligned neighbours, and the misaligned loads are reported as a lint warning. */
#include <athread.h>
#include <stdio.h>

#define CORES 64
#define N 256

double in[CORES * N], out[CORES * N];
unsigned long aligned_cycles[CORES], shifted_cycles[CORES];

extern SLAVE_FUN(stencil3)();

int main(void) {
  int i, c, bad = 0, dearer = 0;
  for (i = 0; i < CORES * N; i++) in[i] = (i * 7) % 11;
  athread_init();
  athread_spawn(stencil3, 0);
  athread_join();
  athread_halt();
  for (c = 0; c < CORES; c++) {
    for (i = 4; i < N - 4; i++) {
      double want = in[c * N + i - 1] + 2 * in[c * N + i] + in[c * N + i + 1];
      if (out[c * N + i] != want) bad++;
    }
    dearer += shifted_cycles[c] > aligned_cycles[c];
  }
  printf("misaligned_simd ok: %d mismatches, misaligned loads dearer on %d cores (aligned %lu, shifted %lu cycles)\n",
         bad, dearer, aligned_cycles[0], shifted_cycles[0]);
  return bad != 0;
}
