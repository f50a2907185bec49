#include <slave.h>

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
  athread_put(PE_MODE, buf, &out[id * m], bytes, (void*)&reply, 0, 0);
  while (reply != 2) {
  }
done:
  return;
}
