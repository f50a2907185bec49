/* STREAM kernels for the compute cores, with the dma_desc API: each core streams its blocks through
 * __thread_local buffers (scale uses an array on the slave stack, add spin-waits on the reply counter). */
#include <dma.h>
#include <slave.h>

#include "stream.h"

#define BLOCKS_PER_CORE (STREAM_N / STREAM_BS / 64)

__thread_local double la[STREAM_BS] __attribute__((aligned(32)));
__thread_local double lb[STREAM_BS] __attribute__((aligned(32)));
__thread_local double lc[STREAM_BS] __attribute__((aligned(32)));
__thread_local volatile int get_reply, put_reply;
__thread_local dma_desc get_desc, put_desc;

static void setup(void) {
  dma_set_op(&get_desc, DMA_GET);
  dma_set_mode(&get_desc, PE_MODE);
  dma_set_size(&get_desc, STREAM_BS * sizeof(double));
  dma_set_reply(&get_desc, &get_reply);
  dma_set_op(&put_desc, DMA_PUT);
  dma_set_mode(&put_desc, PE_MODE);
  dma_set_size(&put_desc, STREAM_BS * sizeof(double));
  dma_set_reply(&put_desc, &put_reply);
  get_reply = 0;
  put_reply = 0;
}

static long block(int k) {
  return ((long)k * 64 + _MYID) * STREAM_BS;
}

void stream_copy(void) {
  setup();
  for (int k = 0; k < BLOCKS_PER_CORE; ++k) {
    dma(get_desc, (long)(a + block(k)), (long)la);
    dma_wait(&get_reply, k + 1);
    dma(put_desc, (long)(c + block(k)), (long)la);
    dma_wait(&put_reply, k + 1);
  }
}

void stream_scale(void) {
  double buf[STREAM_BS] __attribute__((aligned(32)));
  setup();
  for (int k = 0; k < BLOCKS_PER_CORE; ++k) {
    dma(get_desc, (long)(c + block(k)), (long)buf);
    dma_wait(&get_reply, k + 1);
    for (int i = 0; i < STREAM_BS; ++i) buf[i] = scalar * buf[i];
    dma(put_desc, (long)(b + block(k)), (long)buf);
    dma_wait(&put_reply, k + 1);
  }
}

void stream_add(void) {
  setup();
  for (int k = 0; k < BLOCKS_PER_CORE; ++k) {
    dma(get_desc, (long)(a + block(k)), (long)la);
    dma(get_desc, (long)(b + block(k)), (long)lb);
    while (get_reply != 2 * (k + 1)) {
    }
    for (int i = 0; i < STREAM_BS; ++i) lc[i] = la[i] + lb[i];
    dma(put_desc, (long)(c + block(k)), (long)lc);
    while (put_reply != k + 1) {
    }
  }
}

void stream_triad(void) {
  setup();
  for (int k = 0; k < BLOCKS_PER_CORE; ++k) {
    dma(get_desc, (long)(b + block(k)), (long)lb);
    dma(get_desc, (long)(c + block(k)), (long)lc);
    dma_wait(&get_reply, 2 * (k + 1));
    for (int i = 0; i < STREAM_BS; ++i) la[i] = lb[i] + scalar * lc[i];
    dma(put_desc, (long)(a + block(k)), (long)la);
    dma_wait(&put_reply, k + 1);
  }
}
