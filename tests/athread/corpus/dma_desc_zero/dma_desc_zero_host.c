/* Corpus: the dma_desc idioms of SW26010 kernels: `dma_desc d = 0;`, comparing a descriptor with 0, dma() with
 * addresses cast to long and with plain pointers, dma_wait, the upper-case RTC() cycle counter and athread.h's
 * HLINE. */
#include <athread.h>
#include <stdio.h>

int src[64 * 32], dst[64 * 32];
unsigned long cycles[64];

extern SLAVE_FUN(dma_desc_zero)();

int main(void) {
  for (int i = 0; i < 64 * 32; ++i) src[i] = 3 * i - 7;
  athread_init();
  athread_spawn(dma_desc_zero, 0);
  athread_join();
  int errors = 0;
  for (int i = 0; i < 64 * 32; ++i) errors += dst[i] != src[i] + 1;
  for (int c = 0; c < 64; ++c) errors += cycles[c] == 0;
  printf(HLINE); /* from athread.h, as the SDK's STREAM ports expect */
  printf("dma_desc_zero %s: %d mismatches\n", errors == 0 ? "ok" : "FAILED", errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
