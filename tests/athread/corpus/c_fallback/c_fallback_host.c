/* Corpus: slave files in the C the Sunway compilers accept and C++ does not: an implicit int, a goto past an
 * initialisation, and a call to a function declared nowhere (defined in another slave file, as assembly kernels
 * in .S files are), with register communication over inline-asm macros. They build unmodified (compiled as C)
 * and validate. */
#include <athread.h>
#include <stdio.h>

#define CORES 64
#define M 96

double in[CORES * M], out[CORES * M];
int m = M;

extern SLAVE_FUN(blocked_copy)();

int main(void) {
  int i, bad = 0;
  for (i = 0; i < CORES * M; i++) in[i] = i * 0.25;
  athread_init();
  athread_spawn(blocked_copy, 0);
  athread_join();
  athread_halt();
  for (i = 0; i < CORES * M; i++) {
    int col = i % M;
    double want = col < 64 ? 2 * in[i] : in[i];
    if (out[i] != want) bad++;
  }
  printf("c_fallback ok: %d mismatches\n", bad);
  return bad != 0;
}
