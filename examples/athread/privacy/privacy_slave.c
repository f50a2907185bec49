/* Each core writes its own value into a __thread_local, syncs (every other core runs in between), then puts it;
 * a stack array and an ldm_malloc buffer round-trip 16 longs; the cycle counter measures a spin-waited get. */
#include <slave.h>

extern long in[64 * 16], out[64 * 16], id_out[64], waited[64];

__thread_local long mine = 1;
__thread_local volatile int reply;

void privacy(void) {
  long stack_buf[16];
  long* heap = (long*)ldm_malloc(16 * sizeof(long));
  mine += 3 * _MYID;
  athread_syn(ARRAY_SCOPE, 0xffff);
  reply = 0;
  const unsigned long t0 = athread_time_cycle();
  athread_get(PE_MODE, &in[16 * _MYID], stack_buf, sizeof stack_buf, (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  const unsigned long t1 = athread_time_cycle();
  for (int i = 0; i < 16; ++i) heap[i] = 2 * stack_buf[i];
  athread_put(PE_MODE, heap, &out[16 * _MYID], 16 * sizeof(long), (void*)&reply, 0, 0);
  athread_put(PE_MODE, (void*)&mine, &id_out[_MYID], sizeof(long), (void*)&reply, 0, 0);
  while (reply != 3) {
  }
  waited[_MYID] = (long)(t1 - t0);
  ldm_free(heap, 16 * sizeof(long));
}
