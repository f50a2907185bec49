/* Corpus: a register get that no core answers (core 9 waits on its row bus, nobody sends) would hang on hardware;
 * the simulator reports the deadlock, naming the waiting core, and the program exits with status 3. */
#include <athread.h>
#include <stdio.h>

extern SLAVE_FUN(reg_deadlock)();

int main(void) {
  athread_init();
  athread_spawn(reg_deadlock, 0);
  athread_join();
  printf("reg_deadlock: not reached\n");
  athread_halt();
  return 0;
}
