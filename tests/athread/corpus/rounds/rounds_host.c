/* Corpus: several init / spawn / join / halt rounds in one process (a solver that hands its cores back between
 * phases). Every round's simulated cycles and DMA must be in the summary line each athread_halt prints and in the
 * trace; the program prints where each round ended (athread_host_cycles) for the test to compare. */
#include <athread.h>
#include <stdio.h>
#include <stdlib.h>

#define N (64 * 512)

float in[N], out[N];

extern SLAVE_FUN(square)();

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  int r, i, bad = 0;
  unsigned long before = 0, first = 0;
  for (i = 0; i < N; i++) in[i] = (float)(i % 100);
  for (r = 1; r <= rounds; r++) {
    athread_init();
    athread_spawn(square, 0);
    athread_join();
    athread_halt();
    unsigned long now = athread_host_cycles();
    fprintf(stderr, "round %d ends at %lu\n", r, now);
    if (r == 1) first = now;
    if (now - before != first) bad++; /* the rounds do the same work */
    before = now;
    for (i = 0; i < N; i++) {
      if (out[i] != in[i] * in[i]) bad++;
      in[i] = out[i] > 1000.0f ? (float)(i % 100) : in[i];
    }
  }
  printf("rounds ok: %d mismatches\n", bad);
  return bad != 0;
}
