/* Corpus: hand-written sw_64 inline assembly as Sunway kernels carry it: a cycle-counter helper over `rcsr`, the
 * host's `rtc`, an `rpcc` helper over a plain `asm`, `memb`, register-communication macros defined over putr /
 * getr / putc / getc, an array sync written as synr / sync and a row sync, all built unmodified. A row broadcast and a
 * column sum check the register idioms; the timed DMA must show simulated cycles (non-zero, the same on every run). */
#include <athread.h>
#include <stdio.h>

#define CORES 64

static inline unsigned long host_clock(void) {
  unsigned long t;
  asm volatile("rtc %0" : "=r"(t));
  return t;
}

double tile[CORES * 32];
double row_seen[CORES];
double col_sum[CORES];
unsigned long dma_cycles[CORES];

extern SLAVE_FUN(asm_idioms)();

int main(void) {
  int i, bad = 0;
  for (i = 0; i < CORES * 32; i++) tile[i] = i % 13;
  athread_init();
  unsigned long t0 = host_clock();
  athread_spawn(asm_idioms, 0);
  unsigned long t_mid = host_clock(); /* while the spawn runs: the simulator finishes it first (no host race) */
  athread_join();
  unsigned long t1 = host_clock();
  if (t_mid != t1) bad++;
  athread_halt();
  for (i = 0; i < CORES; i++) {
    int row = i / 8, col = i % 8;
    if (row_seen[i] != 100.0 * row) bad++;      /* what column 0 of the row sent */
    if (col_sum[i] != (double)(8 * col)) bad++; /* 0 + 1 + ... + 7 rows, each sending its column number */
    if (dma_cycles[i] == 0) bad++;
  }
  printf("inline_asm ok: %d mismatches, spawn took %lu simulated cycles, core 0's get %lu\n", bad, t1 - t0,
         dma_cycles[0]);
  return bad != 0;
}
