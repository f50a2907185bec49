/* A deliberately broken athread program: the slave waits for two completions on a reply counter that only one
 * request uses, which hangs on hardware; ldmsim traps it as a deadlock naming dma_wait (exit status 3). */
#include <athread.h>
#include <stdio.h>

int data[64];

extern SLAVE_FUN(wait_too_long)();

int main(void) {
  athread_init();
  athread_spawn(wait_too_long, 0);
  athread_join();
  printf("not reached: the wait should have trapped\n");
  athread_halt();
  return 0;
}
