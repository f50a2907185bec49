#include <slave.h>

#define REG_PUTR(var, dst) asm volatile("putr %0,%1\n" ::"r"(var), "r"(dst))
#define REG_GETR(var) asm volatile("getr %0\n" : "=r"(var))

#define blkM 32
#define MAXM 128

extern double in[], out[];
extern int m;

void blocked_copy(void) {
  double buf[MAXM];
  volatile int reply = 0;
  int id = _MYID, i;
  const Ms = m / blkM * blkM; /* implicit int */
  if (m > MAXM) goto done;
  int bytes = m * sizeof(double); /* jumped over by the goto above */
  athread_get(PE_MODE, &in[id * m], buf, bytes, (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  for (i = 0; i + blkM <= Ms && i < 64; i += blkM) scale_block(buf + i, blkM); /* declared nowhere */
  double check = 1.5 * _ROW; /* column 0 sends its row's value along the row over the register bus */
  if (_COL == 0) {
    REG_PUTR(check, 8);
  } else {
    REG_GETR(check);
  }
  if (check != 1.5 * _ROW) buf[0] = -1;
  athread_put(PE_MODE, buf, &out[id * m], bytes, (void*)&reply, 0, 0);
  while (reply != 2) {
  }
done:
  return;
}
