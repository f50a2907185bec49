/* Corpus: a slave file compiled as C that broadcasts doublev4 values over the register buses with the SDK's
 * simd_putr / simd_getr (rows) and simd_putc / simd_getc (columns); every core must hold its row's and its
 * column's vector. */
#include <athread.h>
#include <stdio.h>

#define CORES 64

double out[CORES * 8];

extern SLAVE_FUN(broadcast_v4)();

int main(void) {
  int id, k, bad = 0;
  athread_init();
  athread_spawn(broadcast_v4, 0);
  athread_join();
  athread_halt();
  for (id = 0; id < CORES; id++) {
    int r = id / 8, c = id % 8;
    for (k = 0; k < 4; k++) {
      if (out[id * 8 + k] != 100.0 * r + k) bad++;
      if (out[id * 8 + 4 + k] != (double)c * (k + 1)) bad++;
    }
  }
  printf("c_simd_regcomm ok: %d mismatches\n", bad);
  return bad != 0;
}
