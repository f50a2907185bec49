/* Corpus: athread_ssync_node, a barrier across every core of every core group of an athread_spawn_cgs. Each core
 * puts a value, waits at the node barrier, then reads the value a core of the next group put: without the
 * barrier that group may not have written yet. Argument "skip": core 5 of group 3 never reaches the barrier,
 * which would hang on hardware and traps as a deadlock here. */
#include <athread.h>
#include <crts.h>
#include <stdio.h>
#include <string.h>

long written[6 * 64], seen[6 * 64];
unsigned long after_barrier[6 * 64];
int skip_mode;

extern void SLAVE_FUN(node_sync)(void*);

int main(int argc, char** argv) {
  skip_mode = argc > 1 && strcmp(argv[1], "skip") == 0;
  athread_init_cgs();
  athread_spawn_cgs(node_sync, 0);
  athread_join_cgs();
  int errors = 0;
  for (int cg = 0; cg < 6; ++cg) {
    for (int id = 0; id < 64; ++id) {
      const int next = (cg + 1) % 6;
      errors += seen[cg * 64 + id] != 1000 * next + id;
      errors += after_barrier[cg * 64 + id] != after_barrier[0]; /* everyone leaves the barrier together */
    }
  }
  printf("node_sync %s: %d mismatches on 6 x 64 cores\n", errors == 0 ? "ok" : "FAILED", errors);
  athread_halt_cgs();
  return errors == 0 ? 0 : 1;
}
