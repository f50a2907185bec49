/* Corpus: a register get that no core answers (core 9 waits on its row bus, nobody sends) would hang on hardware;
 * the simulator reports the deadlock, naming the waiting core, and the program exits with status 3. */
#include <athread.h>
#include <stdio.h>

int mode;
long got[64][3];

extern SLAVE_FUN(reg_deadlock)();

int main(int argc, char** argv) {
  mode = argc > 1; /* `reg_deadlock args`: the REG_GETR(buf[n++]) check instead of the deadlock */
  athread_init();
  athread_spawn(reg_deadlock, 0);
  athread_join();
  int errors = 0;
  for (int c = 0; c < 64; ++c) {
    if (c % 8 == 0) continue;
    errors += got[c][0] != 10 * (c / 8) + 1 || got[c][1] != 10 * (c / 8) + 2 || got[c][2] != 2;
  }
  printf("reg_deadlock %s: %d mismatches\n", mode ? (errors == 0 ? "args ok" : "args FAILED") : "not reached", errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
