#include <slave.h>

#define TILE 64

struct job {
  double* in;
  double* out;
};

void double_tiles(struct job* j) {
  double buf[TILE];
  volatile int get_reply = 0, put_reply = 0;
  int i;
  athread_get(PE_MODE, j->in + _MYID * TILE, buf, sizeof(buf), (void*)&get_reply, 0, 0, 0);
  while (get_reply != 1) {
  }
  for (i = 0; i < TILE; i++) buf[i] *= 2.0;
  athread_put(PE_MODE, buf, j->out + _MYID * TILE, sizeof(buf), (void*)&put_reply, 0, 0); /* @put */
  while (put_reply != 1) {
  }
}
