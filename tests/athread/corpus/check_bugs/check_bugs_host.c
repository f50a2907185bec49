/* Corpus: the bugs LDMSIM_CHECK finds (docs/checking.md), one per mode, in a double-buffered scale kernel written
 * as Sunway code is written. Mode clean (the default) is the same kernel done right: it must give no report. */
#include <athread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256 /* floats per tile */
#define TILES 4

float in[64 * N * TILES];
float out[64 * N * TILES + 2]; /* put_overlap's last core writes two floats past its share */
float edge[N] = {1.0f};        /* get_past_end reads two floats past its end; initialised, so it sits in mapped data */
float tile_sums[TILES] = {-1.0f}; /* core 0's per-tile sums; off_by_one puts one more */
static float weights[N] = {0.5f}; /* file-local: static_past_end gets one float past its end (through weights_ptr) */
float* weights_ptr = weights;
float* heap_tile; /* malloc'ed: heap_past_end gets one float past its end */
int check_mode;

extern void SLAVE_FUN(check_bugs)(void*);

int main(int argc, char** argv) {
  static const char* const modes[] = {"clean",      "wait_late",    "put_source", "put_overlap",     "reply_reset",
                                      "uninit",     "get_past_end", "misaligned", "tl_wait_late",    "put_wait_late",
                                      "off_by_one", "readback",     "wait_count", "static_past_end", "heap_past_end"};
  const char* mode = argc > 1 ? argv[1] : "clean";
  check_mode = -1;
  for (int m = 0; m < (int)(sizeof modes / sizeof modes[0]); ++m) {
    if (strcmp(mode, modes[m]) == 0) check_mode = m;
  }
  if (check_mode < 0) {
    fprintf(stderr, "check_bugs: unknown mode %s\n", mode);
    return 2;
  }
  for (int i = 0; i < 64 * N * TILES; ++i) in[i] = (float)(i % 1000);
  heap_tile = (float*)malloc(N * sizeof(float));
  for (int i = 0; i < N; ++i) heap_tile[i] = 1.0f;
  athread_init();
  athread_spawn(check_bugs, 0);
  athread_join();
  int errors = 0;
  for (int i = 0; i < 64 * N * TILES; ++i) errors += out[i] != 2.0f * in[i];
  for (int t = 0; t < TILES; ++t) { /* core 0's sums, added in the slave's order */
    float sum = 0.0f;
    for (int i = 0; i < N; ++i) sum += 2.0f * in[t * N + i];
    errors += tile_sums[t] != sum;
  }
  printf("check_bugs %s: %d mismatches\n", mode, errors);
  athread_halt();
  free(heap_tile);
  return check_mode == 0 && errors != 0 ? 1 : 0;
}
