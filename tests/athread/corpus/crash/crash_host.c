/* Corpus: a program that crashes after doing simulated work: `crash segv` dereferences a bad pointer on compute
 * core 5 inside the slave function, `crash assert` fails an assert on the control core after the join. Either
 * way the summary line and the trace so far must be written before the process dies of the signal. */
#undef NDEBUG /* the check stays on in optimised builds, as the program's own build has it */
#include <assert.h>
#include <athread.h>
#include <stdio.h>
#include <string.h>

double field[64 * 64];
int crash_core = -1;

extern SLAVE_FUN(relax)();

int main(int argc, char** argv) {
  int mode_assert = argc > 1 && strcmp(argv[1], "assert") == 0;
  crash_core = argc > 1 && strcmp(argv[1], "segv") == 0 ? 5 : -1;
  athread_init();
  athread_spawn(relax, 0);
  athread_join();
  assert(!mode_assert && "the residual did not converge");
  athread_halt();
  printf("crash: no crash\n");
  return 0;
}
