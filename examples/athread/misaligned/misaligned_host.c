/* A deliberately broken athread program: the slave passes a main-memory address 2 bytes off, which the
 * 4-byte DMA granularity rule forbids; ldmsim traps, names athread_get, and exits with status 3. */
#include <athread.h>
#include <stdio.h>

short data[256];

extern SLAVE_FUN(copy_misaligned)();

int main(void) {
  athread_init();
  athread_spawn(copy_misaligned, 0);
  athread_join();
  printf("not reached: the misaligned get should have trapped\n");
  athread_halt();
  return 0;
}
