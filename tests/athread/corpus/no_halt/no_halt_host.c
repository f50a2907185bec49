/* Corpus: a program that never calls athread_halt still gets its trace (LDMSIM_TRACE) and cycle summary, at
 * exit. */
#include <athread.h>
#include <stdio.h>

float data[64 * 8];

extern SLAVE_FUN(no_halt)();

int main(void) {
  athread_init();
  athread_spawn(no_halt, 0);
  athread_join();
  printf("no_halt: exiting without athread_halt\n");
  return 0;
}
