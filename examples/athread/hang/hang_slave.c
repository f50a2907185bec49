/* The slave of the hang example: one get, then dma_wait for two completions. */
#include <dma.h>
#include <slave.h>

extern int data[64];

__thread_local int buf[64];
__thread_local volatile int reply;
__thread_local dma_desc desc;

void wait_too_long(void) {
  dma_set_op(&desc, DMA_GET);
  dma_set_mode(&desc, PE_MODE);
  dma_set_size(&desc, sizeof buf);
  dma_set_reply(&desc, &reply);
  dma(desc, (long)data, (long)buf);
  dma_wait(&reply, 2);
}
