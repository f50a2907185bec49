/* The athread dma_desc API for slave files: fill a descriptor with dma_set_*, issue it with dma(desc, mem,
 * ldm) and wait with dma_wait(&reply, n). Issues through the same checked path as athread_get/put. */
#ifndef LDMSIM_DMA_H
#define LDMSIM_DMA_H

#include "slave.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A DMA descriptor (a plain struct here; the hardware packs it in a 128-bit register). */
typedef struct {
  int op;
  int mode;
  long size;
  long bsize;
  long stepsize;
  unsigned mask;
  volatile void* reply;
} dma_desc;

static inline void dma_set_op(dma_desc* d, DMA_OP op) {
  d->op = (int)op;
}
static inline void dma_set_mode(dma_desc* d, dma_mode mode) {
  d->mode = (int)mode;
}
static inline void dma_set_size(dma_desc* d, long bytes) {
  d->size = bytes;
}
static inline void dma_set_bsize(dma_desc* d, long bytes) {
  d->bsize = bytes;
}
/** Bytes skipped between two bsize blocks in main memory. */
static inline void dma_set_stepsize(dma_desc* d, long bytes) {
  d->stepsize = bytes;
}
static inline void dma_set_reply(dma_desc* d, volatile void* reply) {
  d->reply = reply;
}
static inline void dma_set_mask(dma_desc* d, unsigned mask) {
  d->mask = mask;
}
/** Issues the descriptor between main-memory address mem and ldm address ldm. */
static inline void dma(dma_desc d, long mem, long ldm) {
  const int get = d.op == DMA_GET || d.op == DMA_GET_P;
  __ldmsim_athread_dma(get ? "dma(DMA_GET)" : "dma(DMA_PUT)", get, d.mode, (const void*)mem, (const void*)ldm, d.size,
                       d.bsize, d.stepsize, d.mask == 0 ? 0xffu : d.mask, d.reply, 0);
}
/** Waits until *reply reaches count. */
static inline void dma_wait(volatile void* reply, int count) {
  __ldmsim_athread_wait("dma_wait", reply, count);
}

#ifdef __cplusplus
}
#endif

#endif
