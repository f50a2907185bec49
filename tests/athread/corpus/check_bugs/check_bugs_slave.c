#include <slave.h>

/* Each bug's line carries a marker comment (@name): the corpus test finds the line there and checks that the report
 * names it. */

#define N 256
#define TILES 4

enum {
  CLEAN,
  WAIT_LATE,
  PUT_SOURCE,
  PUT_OVERLAP,
  REPLY_RESET,
  UNINIT,
  GET_PAST_END,
  MISALIGNED,
  TL_WAIT_LATE,
  PUT_WAIT_LATE,
  OFF_BY_ONE,
  READBACK,
  WAIT_COUNT,
  STATIC_PAST_END,
  HEAP_PAST_END
};

extern float in[], out[], edge[], tile_sums[];
extern float *weights_ptr, *heap_tile;
extern int check_mode;

__thread_local volatile int get_reply[2];
__thread_local volatile int put_reply;
__thread_local volatile int edge_reply;
__thread_local float tl_tile[N];

void check_bugs(void* arg) {
  (void)arg;
  const int mode = check_mode;
  const int id = _MYID;
  float* buf[2];
  buf[0] = (float*)ldm_malloc(N * sizeof(float));
  buf[1] = (float*)ldm_malloc(N * sizeof(float));
  float* res = (float*)ldm_malloc((N + 2) * sizeof(float));
  float sums[TILES + 1];
  const float* src = &in[id * N * TILES];
  float* dst = &out[id * N * TILES];
  /* uninit: the gets bring only the first half of each tile */
  const int get_bytes = (mode == UNINIT ? N / 2 : N) * (int)sizeof(float);
  volatile int* next_reply = &get_reply[0];

  if (mode == GET_PAST_END) { /* bug: an off-by-two length reads past the end of edge[N] */
    edge_reply = 0;
    athread_get(PE_MODE, edge, res, (N + 2) * (int)sizeof(float), (void*)&edge_reply, 0, 0, 0); /* @get_past_end */
    while (edge_reply != 1) {
    }
  }
  if (mode == STATIC_PAST_END) { /* bug: an off-by-one length reads past the end of a file-local static array */
    edge_reply = 0;
    athread_get(PE_MODE, weights_ptr, res, (N + 1) * (int)sizeof(float), (void*)&edge_reply, 0, 0, 0); /* @static */
    while (edge_reply != 1) {
    }
  }
  if (mode == HEAP_PAST_END) { /* bug: an off-by-one length reads past the end of a malloc'ed array */
    edge_reply = 0;
    athread_get(PE_MODE, heap_tile, res, (N + 1) * (int)sizeof(float), (void*)&edge_reply, 0, 0, 0); /* @heap */
    while (edge_reply != 1) {
    }
  }
  if (mode == TL_WAIT_LATE) { /* bug: a __thread_local tile is read before its get's reply */
    edge_reply = 0;
    athread_get(PE_MODE, (void*)src, tl_tile, N * (int)sizeof(float), (void*)&edge_reply, 0, 0, 0);
    volatile float first = tl_tile[0]; /* @tl_wait_late */
    (void)first;
    while (edge_reply != 1) {
    }
  }
  if (mode == MISALIGNED) { /* bug: a get from half-way into a float: the DMA traps (under lint: a warning) */
    const char* half = (const char*)src + 2;
    athread_get(PE_MODE, half, buf[0], N * (int)sizeof(float), (void*)&get_reply[0], 0, 0, 0); /* @misaligned */
  }
  get_reply[0] = get_reply[1] = 0;
  athread_get(PE_MODE, (void*)src, buf[0], get_bytes, (void*)&get_reply[0], 0, 0, 0);
  put_reply = 0;
  for (int t = 0; t < TILES; ++t) {
    const int cur = t & 1;
    const int nxt = cur ^ 1;
    if (t + 1 < TILES) {
      /* reply_reset's bug: one counter for both buffers, reset while the current tile's get still counts on it */
      next_reply = mode == REPLY_RESET ? &get_reply[0] : &get_reply[nxt];
      *next_reply = 0; /* @reply_reset */
      athread_get(PE_MODE, (void*)(src + (t + 1) * N), buf[nxt], get_bytes, (void*)next_reply, 0, 0, 0);
    }
    volatile int* cur_reply = mode == REPLY_RESET ? &get_reply[0] : &get_reply[cur];
    if (mode != WAIT_LATE) {
      /* wait_count's bug: one get counts on the reply, the loop waits for two */
      const int expected = mode == WAIT_COUNT && t == TILES - 1 ? 2 : 1;
      while (*cur_reply != expected) { /* @wait_count */
      }
    }
    sums[t] = 0.0f;
    for (int i = 0; i < N; ++i) {
      res[i] = buf[cur][i] * 2.0f; /* @compute */
      sums[t] += res[i];
    }
    if (mode == WAIT_LATE) { /* bug: the wait comes after the tile was used */
      while (*cur_reply != 1) {
      }
    }
    /* put_wait_late's bug: the previous tile's put is waited for here, after res was computed again, to overlap it
     * with the computation; it belongs before the loop above */
    while (put_reply != t) {
    }
    const int put_floats = mode == PUT_OVERLAP && t == TILES - 1 ? N + 2 : N; /* bug: two floats too many */
    if (put_floats != N) res[N] = res[N + 1] = 0.0f;
    athread_put(PE_MODE, res, dst + t * N, put_floats * (int)sizeof(float), (void*)&put_reply, 0, 0); /* @put */
    if (mode == PUT_SOURCE) res[0] = -1.0f; /* @put_source: the put's source changes before its wait */
    if (mode == READBACK) { /* bug: the tile is read back from main memory before its put was waited for */
      edge_reply = 0;
      athread_get(PE_MODE, dst + t * N, buf[cur], N * (int)sizeof(float), (void*)&edge_reply, 0, 0, 0); /* @readback */
      while (edge_reply != 1) {
      }
    }
    if (mode != PUT_WAIT_LATE) {
      while (put_reply != t + 1) {
      }
    }
  }
  while (put_reply != TILES) {
  }
  if (id == 0) { /* core 0 writes the per-tile sums of its share; off_by_one's bug: one sum too many */
    const int sum_count = mode == OFF_BY_ONE ? TILES + 1 : TILES;
    sums[TILES] = 0.0f;
    edge_reply = 0;
    athread_put(PE_MODE, sums, tile_sums, sum_count * (int)sizeof(float), (void*)&edge_reply, 0, 0); /* @off_by_one */
    while (edge_reply != 1) {
    }
  }
  ldm_free(res, (N + 2) * sizeof(float));
  ldm_free(buf[1], N * sizeof(float));
  ldm_free(buf[0], N * sizeof(float));
}
