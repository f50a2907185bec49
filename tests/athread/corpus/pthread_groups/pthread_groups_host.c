/* Corpus: one host pthread per core group, as SW26010 programs drive the four core groups of a chip from one
 * process: each thread initialises athread, spawns the kernel on its own group with its own slice of the data,
 * joins and halts. Group g scales g + 1 tiles per core, so the groups' simulated times differ. With the argument
 * "reverse" the threads start in the opposite order (later threads first); the simulated results must not change.
 * With "too_many" a fifth control thread must get a clear error. */
#include <athread.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GROUPS 4
#define CORES 64
#define TILE 128
#define PER_GROUP (CORES * TILE * GROUPS)

struct job {
  double* data;
  int tiles;
  int cgn_seen[CORES];
};

double data[GROUPS * PER_GROUP];
struct job jobs[GROUPS];
int group_of_thread[GROUPS];
int reverse_start = 0;

extern SLAVE_FUN(scale_tiles)();

static void* control(void* p) {
  struct job* j = (struct job*)p;
  int me = (int)(j - jobs);
  if (reverse_start) usleep((useconds_t)(1000 * 30 * (GROUPS - 1 - me)));
  athread_init();
  group_of_thread[me] = current_array_id();
  athread_spawn(scale_tiles, j);
  athread_join();
  athread_halt();
  return 0;
}

static void* fifth(void* p) { /* `too_many`: one control thread more than sw26010 has core groups */
  (void)p;
  athread_init();
  return 0;
}

int main(int argc, char** argv) {
  pthread_t threads[GROUPS], extra;
  int g, i, bad = 0;
  reverse_start = argc > 1 && strcmp(argv[1], "reverse") == 0;
  if (argc > 1 && strcmp(argv[1], "too_many") == 0) {
    for (g = 0; g < GROUPS; g++) pthread_create(&threads[g], NULL, control, &jobs[g]);
    for (g = 0; g < GROUPS; g++) pthread_join(threads[g], NULL);
    pthread_create(&extra, NULL, fifth, NULL);
    pthread_join(extra, NULL);
    return 0;
  }
  for (i = 0; i < GROUPS * PER_GROUP; i++) data[i] = i;
  for (g = 0; g < GROUPS; g++) {
    jobs[g].data = &data[g * PER_GROUP];
    jobs[g].tiles = g + 1;
    pthread_create(&threads[g], NULL, control, &jobs[g]);
  }
  for (g = 0; g < GROUPS; g++) pthread_join(threads[g], NULL);
  for (g = 0; g < GROUPS; g++) {
    for (i = 0; i < PER_GROUP; i++) {
      double x = g * PER_GROUP + i;
      double want = i < CORES * TILE * (g + 1) ? 2.0 * x : x;
      if (data[g * PER_GROUP + i] != want) bad++;
    }
    for (i = 0; i < CORES; i++) {
      if (jobs[g].cgn_seen[i] != g) bad++;
    }
    if (group_of_thread[g] != g) bad++;
  }
  printf("pthread_groups ok: %d mismatches, groups %d %d %d %d\n", bad, group_of_thread[0], group_of_thread[1],
         group_of_thread[2], group_of_thread[3]);
  return bad != 0;
}
