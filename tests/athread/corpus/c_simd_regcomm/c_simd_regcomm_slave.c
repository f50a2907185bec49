#include <simd.h>
#include <slave.h>

extern double out[];

/* C only (row_base is declared nowhere), so this file is compiled as C: the SDK's vector register
 * communication, v = simd_getr(v) / simd_putr(v, 8) along rows and simd_getc / simd_putc along columns. */
void broadcast_v4(void) {
  double buf[8] __attribute__((aligned(32)));
  volatile int reply = 0;
  doublev4 v = simd_set_doublev4(0, 0, 0, 0), w = v;
  int r = _ROW, c = _COL;
  double base = row_base(r);
  if (c == 0) {
    v = simd_set_doublev4(base, base + 1, base + 2, base + 3);
    simd_putr(v, 8);
  } else {
    v = simd_getr(v);
  }
  if (r == 0) {
    w = simd_set_doublev4(c, 2 * c, 3 * c, 4 * c);
    simd_putc(w, 8);
  } else {
    w = simd_getc(w);
  }
  simd_store(v, buf);
  simd_store(w, buf + 4);
  athread_put(PE_MODE, buf, &out[_MYID * 8], sizeof buf, (void*)&reply, 0, 0);
  while (reply != 1) {
  }
}

int row_base(int r) {
  return 100 * r;
}
