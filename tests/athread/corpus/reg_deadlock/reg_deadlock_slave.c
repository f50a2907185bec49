#include <crts.h>
#include <simd.h>
#include <slave.h>

extern int mode;
extern long got[64][3];

void reg_deadlock(void) {
  doublev4 v = 0;
  if (mode == 0) {
    if (_MYID == 9) REG_GETR(v);
    return;
  }
  /* REG_GETR evaluates its argument once: buf[n++] advances n by one per value. */
  long buf[3] = {0, 0, 0};
  int n = 0;
  if (_COL == 0) {
    long first = 10 * _ROW + 1, second = 10 * _ROW + 2;
    REG_PUTR(first, 8);
    REG_PUTR(second, 8);
  } else {
    REG_GETR(buf[n++]);
    REG_GETR(buf[n++]);
  }
  buf[2] = n;
  athread_dma_put(got[_MYID], buf, sizeof(buf));
}
