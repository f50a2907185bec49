/* Corpus: vector instructions of an unmodified SIMD kernel are charged through the arch's compute model:
 * 1000 FMAs on doublev4 cost 1000 cycles on sw26010 (one FMA per cycle), and 1500 vector loads issued beside
 * them cost 1500 (one ldm access per cycle, dual issue), a divide 16 (not pipelined: an estimate), scalar C
 * costs nothing. */
#include <athread.h>
#include <stdio.h>

unsigned long fma_cycles[64], mixed_cycles[64], scalar_cycles[64], divide_cycles[64];
double result[64];

extern SLAVE_FUN(simd_charge)();

int main(void) {
  athread_init();
  athread_spawn(simd_charge, 0);
  athread_join();
  int errors = 0;
  for (int c = 0; c < 64; ++c) errors += result[c] != 4.0 * 1000 * 0.5 * 0.25 + 4.0 * 1500 * 0.5;
  printf("simd_charge: fma %lu cycles, fma+loads %lu cycles, scalar %lu cycles, 10 divides %lu cycles, %d mismatches\n",
         fma_cycles[0], mixed_cycles[0], scalar_cycles[0], divide_cycles[0], errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
