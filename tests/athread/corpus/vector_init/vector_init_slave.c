#include <math.h>
#include <simd.h>
#include <slave.h>

extern double vin[], vout[];
extern float fout[];
extern long bits_out[];

__thread_local double buf[8] __attribute__((aligned(32)));
__thread_local float fbuf[8] __attribute__((aligned(32)));
__thread_local long bits[4] __attribute__((aligned(32)));
__thread_local volatile int reply;

void vector_init(void* arg) {
  (void)arg;
  const int id = _MYID;
  reply = 0;
  athread_get(PE_MODE, &vin[id * 8], buf, 8 * sizeof(double), (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  doublev4 x, v = 0, w;
  simd_load(x, buf);
  v = 1.0;
  w = (doublev4)3.0;
  doublev4 r = 2 * x + v + w;
  simd_store(r, buf);

  floatv4 quarter = 0.25f;
  floatv4 xf = (floatv4)x; /* value conversion: 4 doubles -> 4 floats */
  floatv4 q = xf * quarter;
  doublev4 back = (doublev4)q; /* and back */
  simd_store(back, &buf[4]);

  doublev4 half = 0.5;
  floatv4 sum = (floatv4)(x + half);
  simd_store(sum, fbuf);

  int256 z = 0;
  simd_store(z, bits);
  doublev4 inf = simd_set_doublev4(0.0, 0.0, INFINITY, 0.0);
  int256 raw = (int256)inf; /* same size, different lanes: the bits */
  bits[2] = ((long*)&raw)[2];

  reply = 0;
  athread_put(PE_MODE, buf, &vout[id * 8], 8 * sizeof(double), (void*)&reply, 0, 0);
  athread_put(PE_MODE, fbuf, &fout[id * 8], 4 * sizeof(float), (void*)&reply, 0, 0);
  athread_put(PE_MODE, bits, &bits_out[id * 4], 4 * sizeof(long), (void*)&reply, 0, 0);
  while (reply != 3) {
  }
}
