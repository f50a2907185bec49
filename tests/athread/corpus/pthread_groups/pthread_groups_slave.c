#include <slave.h>

#define CORES 64
#define TILE 128

struct job {
  double* data;
  int tiles;
  int cgn_seen[CORES];
};

void scale_tiles(struct job* j) {
  double buf[TILE];
  volatile int get_reply = 0, put_reply = 0;
  int t, i;
  for (t = 0; t < j->tiles; t++) {
    double* at = j->data + (t * CORES + _MYID) * TILE;
    athread_get(PE_MODE, at, buf, sizeof(buf), (void*)&get_reply, 0, 0, 0);
    while (get_reply != t + 1) {
    }
    for (i = 0; i < TILE; i++) buf[i] *= 2.0;
    athread_put(PE_MODE, buf, at, sizeof(buf), (void*)&put_reply, 0, 0);
    while (put_reply != t + 1) {
    }
  }
  j->cgn_seen[_MYID] = _CGN;
}
