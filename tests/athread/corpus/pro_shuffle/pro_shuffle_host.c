/* Corpus: SW26010-Pro word shuffles under intv16 controls. An 8 x 8 float transpose in three interleave stages
 * of simd_vshfs (the control words a published Pro GEMM uses for it), the same with simd_vshfd on doubles, a
 * word reversal with simd_vshfw, and (argument "split") a control that splits a 64-bit lane, which traps. */
#include <athread.h>
#include <stdio.h>
#include <string.h>

float fin[64], fout[64][64];
double din[64], dout[64][64];
int wout[64][16];
int split_mode;

extern SLAVE_FUN(pro_shuffle)();

int main(int argc, char** argv) {
  split_mode = argc > 1 && strcmp(argv[1], "split") == 0;
  for (int i = 0; i < 64; ++i) {
    fin[i] = (float)i;
    din[i] = 0.5 * i;
  }
  athread_init();
  athread_spawn(pro_shuffle, 0);
  athread_join();
  int errors = 0;
  for (int c = 0; c < 64; ++c) {
    for (int r = 0; r < 8; ++r)
      for (int k = 0; k < 8; ++k) {
        errors += fout[c][8 * r + k] != fin[8 * k + r];
        errors += dout[c][8 * r + k] != din[8 * k + r];
      }
    for (int w = 0; w < 16; ++w) errors += wout[c][w] != 100 * c + 15 - w;
  }
  printf("pro_shuffle %s: %d mismatches\n", errors == 0 ? "ok" : "FAILED", errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
