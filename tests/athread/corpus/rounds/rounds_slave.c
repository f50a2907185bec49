#include <slave.h>

#define N (64 * 512)
#define CHUNK 512

extern float in[], out[];

void square(void) {
  float* buf = (float*)ldm_malloc(CHUNK * sizeof(float));
  volatile int reply = 0;
  int i;
  athread_get(PE_MODE, &in[_MYID * CHUNK], buf, CHUNK * sizeof(float), (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  for (i = 0; i < CHUNK; i++) buf[i] = buf[i] * buf[i];
  athread_put(PE_MODE, buf, &out[_MYID * CHUNK], CHUNK * sizeof(float), (void*)&reply, 0, 0);
  while (reply != 2) {
  }
  ldm_free(buf, CHUNK * sizeof(float));
}
