#include <slave.h>

void dma_read(void* ldm, const void* mem, int bytes) {
  volatile int reply = 0;
  athread_get(PE_MODE, (void*)mem, ldm, bytes, (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
}

void dma_write(void* mem, const void* ldm, int bytes) {
  volatile int reply = 0;
  athread_put(PE_MODE, (void*)ldm, mem, bytes, (void*)&reply, 0, 0);
  while (reply != 1) {
  }
}
