/* Corpus: SW26010-Pro RMA as kernels use it: every core puts a block into its right neighbour's local store
 * (athread_rma_iput, replies on both sides, athread_rma_wait_value), core 0 broadcasts a scalar to the whole
 * array (athread_rma_ibcast, l_rply before len) and every core of a row receives a row broadcast from its first
 * core (athread_rma_row_ibcast); an RMA issued before the receivers have started is not lost, and a reply word
 * cleared by its owner after a barrier still counts the RMA that lands after the clear. `rma_ring deadlock`
 * waits for an RMA no core sends: exit 3, naming the wait. */
#include <athread.h>
#include <stdio.h>
#include <string.h>

long received[64][8], broadcast[64], row_value[64];
unsigned long ring_cycles[64];
int deadlock;

extern SLAVE_FUN(rma_ring)();

int main(int argc, char** argv) {
  deadlock = argc > 1 && strcmp(argv[1], "deadlock") == 0;
  CRTS_init();
  athread_spawn(rma_ring, 0);
  athread_join();
  int errors = 0;
  for (int c = 0; c < 64; ++c) {
    const int left = (c + 63) % 64;
    for (int k = 0; k < 8; ++k) errors += received[c][k] != 100 * left + k;
    errors += broadcast[c] != 4242;
    errors += row_value[c] != 1000 + c / 8;
    errors += ring_cycles[c] < 53; /* at least the flight time */
  }
  printf("rma_ring %s: %d mismatches, ring step %lu cycles on core 0\n", errors == 0 ? "ok" : "FAILED", errors,
         ring_cycles[0]);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
