/* Corpus (build failure expected): a slave file with sw_64 assembly ldmsim does not know (a hand-scheduled vector
 * load); the build must stop naming the file, the line and the instruction. */
#include <athread.h>

extern SLAVE_FUN(vload)();

int main(void) {
  athread_init();
  athread_spawn(vload, 0);
  athread_join();
  athread_halt();
  return 0;
}
