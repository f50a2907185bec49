#include <slave.h>

#define K 16

extern double coef[], row_scales[], x[], y[];

void scale_by_shared(void) {
  double shared[K];    /* filled by core 0's BCAST get */
  double row_scale[K]; /* filled by column 0's ROW get */
  double mine[K];
  volatile int reply = 0;
  int id = _MYID, k, expect = 0;

  athread_syn(ARRAY_SCOPE, 0xffff);
  if (id == 0) {
    athread_get(BCAST_MODE, coef, shared, sizeof(shared), (void*)&reply, 0xff, 0, 0);
    expect++;
  }
  if (_COL == 0) {
    athread_get(ROW_MODE, &row_scales[_ROW * K], row_scale, sizeof(row_scale), (void*)&reply, 0, 0, 0);
    expect++;
  }
  athread_get(PE_MODE, &x[id * K], mine, sizeof(mine), (void*)&reply, 0, 0, 0);
  expect++;
  while (reply != expect) {
  }
  athread_syn(ARRAY_SCOPE, 0xffff);
  for (k = 0; k < K; k++) mine[k] *= shared[k] * row_scale[k];
  athread_put(PE_MODE, mine, &y[id * K], sizeof(mine), (void*)&reply, 0, 0);
  while (reply != expect + 1) {
  }
}
