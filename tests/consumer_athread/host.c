/* A small athread program: every compute core scales its slice of a vector with doublev4 arithmetic. */
#include <athread.h>
#include <stdio.h>

double x[64 * 32];

extern SLAVE_FUN(vector_scale)();

int main(void) {
  for (int i = 0; i < 64 * 32; ++i) x[i] = i;
  athread_init();
  athread_spawn(vector_scale, 0);
  athread_join();
  athread_halt();
  int errors = 0;
  for (int i = 0; i < 64 * 32; ++i) errors += x[i] != 3.0 * i;
  printf("vector_scale %s: %d mismatches\n", errors == 0 ? "ok" : "FAILED", errors);
  return errors != 0;
}
