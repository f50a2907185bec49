/* The stencil sweeps on the compute cores: three strided gets per sweep (planes z-1, z, z+1, a 10-wide
 * x window of every row), one strided put, then a row sync and a column sync (a full barrier). */
#include <slave.h>

#include "stencil.h"

#define WX (TX + 2)

__thread_local double lo[NY][WX], mid[NY][WX], hi[NY][WX];
__thread_local double out[NY - 2][TX];

void stencil_sweeps(void* p) {
  stencil_arg* arg = (stencil_arg*)p;
  const int z = 1 + _ROW;
  const int x0 = 1 + TX * _COL;
  double* src = arg->a;
  double* dst = arg->b;
  volatile int get_reply = 0, put_reply = 0;
  for (int t = 0; t < STEPS; ++t) {
    const int stride = (NX - WX) * (int)sizeof(double);
    athread_get(PE_MODE, src + ((z - 1) * NY) * NX + x0 - 1, lo, NY * WX * sizeof(double), (void*)&get_reply, 0, stride,
                WX * sizeof(double));
    athread_get(PE_MODE, src + (z * NY) * NX + x0 - 1, mid, NY * WX * sizeof(double), (void*)&get_reply, 0, stride,
                WX * sizeof(double));
    athread_get(PE_MODE, src + ((z + 1) * NY) * NX + x0 - 1, hi, NY * WX * sizeof(double), (void*)&get_reply, 0, stride,
                WX * sizeof(double));
    while (get_reply != 3 * (t + 1)) {
    }
    for (int y = 1; y < NY - 1; ++y)
      for (int x = 1; x <= TX; ++x)
        out[y - 1][x - 1] =
            C0 * mid[y][x] + C1 * (mid[y][x - 1] + mid[y][x + 1] + mid[y - 1][x] + mid[y + 1][x] + lo[y][x] + hi[y][x]);
    athread_put(PE_MODE, out, dst + (z * NY + 1) * NX + x0, (NY - 2) * TX * sizeof(double), (void*)&put_reply,
                (NX - TX) * sizeof(double), TX * sizeof(double));
    while (put_reply != t + 1) {
    }
    athread_syn(ROW_SCOPE, 0xff);
    athread_syn(COL_SCOPE, 0xff);
    double* tmp = src;
    src = dst;
    dst = tmp;
  }
}
