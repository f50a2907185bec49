/* One core gets 64 bytes that start 32 bytes before the end of a host mapping: the get must trap, naming it. */
#include <slave.h>

__thread_local char buffer[64];

void overrun(void* arg) {
  if (_MYID != 0) return;
  volatile int reply = 0;
  athread_get(PE_MODE, (char*)arg - 32, buffer, 64, (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
}
