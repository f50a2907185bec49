#include <dma.h>
#include <slave.h>

extern int src[], dst[];
extern unsigned long cycles[];

void dma_desc_zero(void) {
  int buf[32] __attribute__((aligned(32)));
  volatile int get_reply = 0, put_reply = 0;
  dma_desc get_desc = 0, put_desc = 0;
  if (get_desc != 0) return; /* a cleared descriptor compares equal to 0 */
  const unsigned long start = RTC();
  dma_set_op(&get_desc, DMA_GET);
  dma_set_mode(&get_desc, PE_MODE);
  dma_set_size(&get_desc, 32 * sizeof(int));
  dma_set_reply(&get_desc, &get_reply);
  dma(get_desc, (long)(src + _MYID * 32), (long)(buf));
  dma_wait(&get_reply, 1);
  for (int i = 0; i < 32; ++i) buf[i] += 1;
  dma_set_op(&put_desc, DMA_PUT);
  dma_set_mode(&put_desc, PE_MODE);
  dma_set_size(&put_desc, 32 * sizeof(int));
  dma_set_reply(&put_desc, &put_reply);
  dma(put_desc, dst + _MYID * 32, buf); /* pointers work as well */
  dma_wait(&put_reply, 1);
  cycles[_MYID] = RTC() - start;
}
