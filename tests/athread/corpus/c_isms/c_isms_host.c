/* Corpus: C that C++ rejects, in a slave file (compiled as C++ by ldmsim_add_athread_program): void* from
 * ldm_malloc and from the argument without casts, C++ keywords as identifiers, restrict, _Bool, a variable-length
 * array, an int passed as a dma_mode. */
#include <athread.h>
#include <stdio.h>

struct job {
  int n;
  double* in;
  double* out;
};

double in[64 * 16], out[64 * 16];

extern SLAVE_FUN(c_isms)();

int main(void) {
  for (int i = 0; i < 64 * 16; ++i) in[i] = i;
  struct job j = {16, in, out};
  athread_init();
  athread_spawn(c_isms, &j);
  athread_join();
  int errors = 0;
  for (int i = 0; i < 64 * 16; ++i) errors += out[i] != 2.0 * i + 1.0;
  printf("c_isms %s: %d mismatches\n", errors == 0 ? "ok" : "FAILED", errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
