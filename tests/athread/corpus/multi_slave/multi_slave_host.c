/* Corpus: a kernel split over several slave files, as larger athread code bases do: the spawned function in one
 * file, a DMA helper in a second and the tile computation in a third; every file must be linked. */
#include <athread.h>
#include <stdio.h>

#define N (64 * 256)

double a[N], b[N], c[N];

extern SLAVE_FUN(axpy_main)();

int main(void) {
  int i, bad = 0;
  for (i = 0; i < N; i++) {
    a[i] = i * 0.5;
    b[i] = 1.0 + i;
  }
  athread_init();
  athread_spawn(axpy_main, 0);
  athread_join();
  athread_halt();
  for (i = 0; i < N; i++) {
    if (c[i] != 3.0 * a[i] + b[i]) bad++;
  }
  printf("multi_slave ok: %d mismatches\n", bad);
  return bad != 0;
}
