/* The slave of the misaligned example: athread_get from &data[1], an address that is 2 mod 4. */
#include <slave.h>

extern short data[256];

__thread_local short buf[64] __attribute__((aligned(32)));

void copy_misaligned(void) {
  volatile int reply = 0;
  if (_MYID == 5) {
    athread_get(PE_MODE, &data[1], buf, 64, (void*)&reply, 0, 0, 0);
    while (reply != 1) {
    }
  }
}
