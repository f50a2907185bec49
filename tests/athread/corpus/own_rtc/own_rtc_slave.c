#include <slave.h>

#define N 256

extern double in[], out[];
extern unsigned long get_cycles[], put_cycles[], sdk_cycles[];

__thread_local volatile unsigned long get_reply, put_reply;
__thread_local double buf[N];

/* The program's own helpers, as timing code in kernels writes them. */
static inline void rtc(unsigned long* counter) {
  unsigned long rtc;
  asm volatile("rcsr %0,4" : "=r"(rtc));
  *counter = rtc;
}

void RTC(unsigned long* counter) {
  asm volatile("rcsr %0, 4" : "=r"(*counter));
}

void timed_scale(void) {
  int id = athread_get_id(-1), i;
  unsigned long st, ed, t0, t1;
  unsigned long sdk_start = rtc();

  get_reply = 0;
  put_reply = 0;
  rtc(&st);
  athread_get(PE_MODE, &in[id * N], buf, N * 8, (void*)&get_reply, 0, 0, 0);
  while (get_reply != 1)
    ;
  rtc(&ed);
  get_cycles[id] = ed - st;
  for (i = 0; i < N; i++) buf[i] *= 2.0;
  RTC(&t0);
  athread_put(PE_MODE, buf, &out[id * N], N * 8, (void*)&put_reply, 0, 0);
  while (put_reply != 1)
    ;
  RTC(&t1);
  put_cycles[id] = t1 - t0;
  sdk_cycles[id] = rtc() - sdk_start;
}
