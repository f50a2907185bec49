/* Checks the athread semantics ldmsim promises: __thread_local globals are private per core across fiber
 * switches, stack arrays and ldm_malloc buffers are DMA targets, and a spin-waited get costs simulated time. */
#include <athread.h>
#include <stdio.h>

long in[64 * 16], out[64 * 16], id_out[64], waited[64];

extern SLAVE_FUN(privacy)();

int main(void) {
  for (int i = 0; i < 64 * 16; ++i) in[i] = 1000 + i;
  athread_init();
  athread_spawn(privacy, 0);
  athread_join();
  int errors = 0;
  for (int i = 0; i < 64; ++i) errors += id_out[i] != 3 * i + 1 || waited[i] <= 0;
  for (int i = 0; i < 64 * 16; ++i) errors += out[i] != 2 * in[i];
  printf("privacy %s: %d mismatches\n", errors == 0 ? "ok" : "FAILED", errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
