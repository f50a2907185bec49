/* Corpus: a BLAS-3 style kernel with large stack arrays (24 KiB of them, as real kernels have on hardware) next
 * to ldm_malloc'ed buffers; `stack_arrays overflow` and `stack_arrays late_malloc` ask for more than the local
 * store has (the stack or the allocation collides) and must trap. */
#include <athread.h>
#include <stdio.h>
#include <string.h>

double a[64 * 1024], b[64 * 1024];
int overflow;

extern void SLAVE_FUN(stack_arrays)(void*);

int main(int argc, char** argv) {
  overflow = argc > 1 && strcmp(argv[1], "overflow") == 0 ? 1 : argc > 1 && strcmp(argv[1], "late_malloc") == 0 ? 2 : 0;
  for (int i = 0; i < 64 * 1024; ++i) a[i] = i % 97;
  athread_init();
  athread_spawn(stack_arrays, 0);
  athread_join();
  int errors = 0;
  for (int i = 0; i < 64 * 1024; ++i) errors += b[i] != 3.0 * (i % 97);
  printf("stack_arrays %s: %d mismatches\n", errors == 0 ? "ok" : "FAILED", errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
