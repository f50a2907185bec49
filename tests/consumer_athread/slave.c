#include <simd.h>
#include <slave.h>

extern double x[];

void vector_scale(void) {
  double buf[32] __attribute__((aligned(32)));
  volatile int reply = 0;
  athread_get(PE_MODE, &x[_MYID * 32], buf, sizeof(buf), &reply, 0, 0, 0);
  while (reply != 1) {
  }
  doublev4 three = 3, v;
  for (int i = 0; i < 32; i += 4) {
    simd_load(v, &buf[i]);
    v = v * three;
    simd_store(v, &buf[i]);
  }
  athread_put(PE_MODE, buf, &x[_MYID * 32], sizeof(buf), &reply, 0, 0);
  while (reply != 2) {
  }
}
