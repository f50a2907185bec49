#include <simd.h>
#include <slave.h>

void reg_deadlock(void) {
  doublev4 v = 0;
  if (_MYID == 9) REG_GETR(v);
}
