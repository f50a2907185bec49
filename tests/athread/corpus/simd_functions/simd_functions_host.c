/* Corpus: the simd.h functions SW26010 kernels call, with the SDK's semantics: simd_vshff (a 4 x 4 transpose
 * with 0x44 / 0xEE / 0x88 / 0xDD, and the lane-0 broadcast), comparisons giving 2.0 / 0.0 and the selects that
 * consume them, lane extraction and insertion, square root, loade, and `a * b + c` charged as one FMA. */
#include <athread.h>
#include <math.h>
#include <stdio.h>

double matrix[16], transposed[64][16], misc[64][8];
unsigned long fma_cycles[64];

extern SLAVE_FUN(simd_functions)();

int main(void) {
  for (int i = 0; i < 16; ++i) matrix[i] = i;
  athread_init();
  athread_spawn(simd_functions, 0);
  athread_join();
  int errors = 0;
  for (int c = 0; c < 64; ++c) {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) errors += transposed[c][4 * i + j] != matrix[4 * j + i];
    const double want[8] = {5, 5, 5, 5, 7, 1.5, 3, 0.5};
    for (int k = 0; k < 8; ++k) errors += fabs(misc[c][k] - want[k]) > 1e-12;
    errors += fma_cycles[c] != 100;
  }
  errors += athread_host_cycles() > 1000000; /* no runaway charge */
  printf("simd_functions %s: %d mismatches, 100 a*b+c in %lu cycles\n", errors == 0 ? "ok" : "FAILED", errors,
         fma_cycles[0]);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
