/* Corpus: spawns of two host threads (one core group each) checked against each other (docs/checking.md, "Between
 * host threads"). Each thread doubles its slice of `in` into its slice of `out` on its own group. With the argument
 * "overlap" the second slice of `out` starts half a tile early, so the second group's core 0 puts over the end of
 * what the first group's core 63 puts: one dma-race naming both threads' puts. Without it the slices are disjoint
 * and nothing is reported. */
#include <athread.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CORES 64
#define TILE 64
#define SLICE (CORES * TILE)

struct job {
  double* in;
  double* out;
};

double in[2 * SLICE];
double out[2 * SLICE];
struct job jobs[2];

extern SLAVE_FUN(double_tiles)();

static void* control(void* p) {
  athread_init();
  athread_spawn(double_tiles, p);
  athread_join();
  athread_halt();
  return 0;
}

int main(int argc, char** argv) {
  pthread_t threads[2];
  int overlap = argc > 1 && strcmp(argv[1], "overlap") == 0;
  int g, i, bad = 0;
  for (i = 0; i < 2 * SLICE; i++) in[i] = i;
  for (g = 0; g < 2; g++) {
    jobs[g].in = &in[g * SLICE];
    jobs[g].out = &out[g * SLICE - (overlap && g == 1 ? TILE / 2 : 0)];
    pthread_create(&threads[g], NULL, control, &jobs[g]);
  }
  for (g = 0; g < 2; g++) pthread_join(threads[g], NULL);
  for (i = 0; i < 2 * SLICE && !overlap; i++) {
    if (out[i] != 2.0 * i) bad++;
  }
  printf("thread_races %s: %d mismatches\n", overlap ? "overlap" : "clean", bad);
  return bad != 0;
}
