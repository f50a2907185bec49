/* The athread dma_desc API for slave files: fill a descriptor with dma_set_*, issue it with dma(desc, mem,
 * ldm) and wait with dma_wait(&reply, n). Issues through the same checked path as athread_get/put. */
#ifndef LDMSIM_DMA_H
#define LDMSIM_DMA_H

#include <stdint.h>

#include "slave.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A DMA descriptor. The hardware packs it in a vector register, and code initializes and compares it with 0
 * (`dma_desc d = 0;`): in C++ (how slave files are compiled) it is a struct that allows both; in C a plain
 * struct (`dma_desc d = {0};`). */
#define LDMSIM_DMA_DESC_FIELDS \
  int op;                      \
  int mode;                    \
  long size;                   \
  long bsize;                  \
  long stepsize;               \
  unsigned mask;               \
  volatile void* reply;
#ifdef __cplusplus
}
extern "C++" {
struct dma_desc {
  LDMSIM_DMA_DESC_FIELDS

  dma_desc() = default;
  /* `dma_desc d = 0;` clears every field. */
  constexpr dma_desc(int) : op(0), mode(0), size(0), bsize(0), stepsize(0), mask(0), reply(0) {}
  friend bool operator==(const dma_desc& d, long v) {
    return v == 0 && d.op == 0 && d.mode == 0 && d.size == 0 && d.bsize == 0 && d.stepsize == 0 && d.mask == 0 &&
           d.reply == 0;
  }
  friend bool operator!=(const dma_desc& d, long v) { return !(d == v); }
};
}
extern "C" {
#else
typedef struct {
  LDMSIM_DMA_DESC_FIELDS
} dma_desc;
#endif
#undef LDMSIM_DMA_DESC_FIELDS

LDMSIM_ATHREAD_INLINE void dma_set_op(dma_desc* d, DMA_OP op) {
  d->op = (int)op;
}
LDMSIM_ATHREAD_INLINE void dma_set_mode(dma_desc* d, dma_mode mode) {
  d->mode = (int)mode;
}
LDMSIM_ATHREAD_INLINE void dma_set_size(dma_desc* d, long bytes) {
  d->size = bytes;
}
LDMSIM_ATHREAD_INLINE void dma_set_bsize(dma_desc* d, long bytes) {
  d->bsize = bytes;
}
/** Bytes skipped between two bsize blocks in main memory. */
LDMSIM_ATHREAD_INLINE void dma_set_stepsize(dma_desc* d, long bytes) {
  d->stepsize = bytes;
}
LDMSIM_ATHREAD_INLINE void dma_set_reply(dma_desc* d, volatile void* reply) {
  d->reply = reply;
}
LDMSIM_ATHREAD_INLINE void dma_set_mask(dma_desc* d, unsigned mask) {
  d->mask = mask;
}
LDMSIM_ATHREAD_INLINE void __ldmsim_dma_desc_issue(dma_desc d, const void* mem, const void* ldm) {
  if (d.op == DMA_BARRIER) {
    __ldmsim_athread_unsupported("dma(DMA_BARRIER)", "a DMA barrier is not simulated; use dma_wait on the replies");
  }
  const int get = d.op == DMA_GET || d.op == DMA_GET_P;
  __ldmsim_athread_dma(get ? "dma(DMA_GET)" : "dma(DMA_PUT)", get, d.mode, mem, ldm, d.size, d.bsize, d.stepsize,
                       d.mask == 0 ? 0xffu : d.mask, d.reply, 0);
}
#ifdef __cplusplus
}
extern "C++" {
#include <type_traits>
/* Addresses as pointers or as integers of pointer width (`dma(d, (long)a, (long)buf)`). */
template <class A>
inline const void* __ldmsim_dma_address(A a) {
  if constexpr (std::is_pointer_v<A>) {
    return const_cast<const void*>(static_cast<const volatile void*>(a));
  } else {
    static_assert(sizeof(A) >= sizeof(void*), "dma(): an address cast to an integer narrower than a pointer");
    return reinterpret_cast<const void*>(static_cast<uintptr_t>(a));
  }
}
/** Issues the descriptor between main-memory address mem and ldm address ldm. */
template <class M, class L>
inline void dma(const dma_desc& d, M mem, L ldm) {
  __ldmsim_dma_desc_issue(d, __ldmsim_dma_address(mem), __ldmsim_dma_address(ldm));
}
}
extern "C" {
#else
/** Issues the descriptor between main-memory address mem and ldm address ldm. */
LDMSIM_ATHREAD_INLINE void dma(dma_desc d, long mem, long ldm) {
  __ldmsim_dma_desc_issue(d, (const void*)mem, (const void*)ldm);
}
#endif
/** Waits until *reply reaches count. */
LDMSIM_ATHREAD_INLINE void dma_wait(volatile void* reply, int count) {
  __ldmsim_athread_wait("dma_wait", reply, count);
}

#ifdef __cplusplus
}
#endif

#endif
