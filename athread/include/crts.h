/* The SW26010-Pro CRTS compute-core API: identity (CRTS_tid/rid/cid/cgn), blocking and asynchronous DMA
 * (CRTS_dma_get/put/iget/iput and their _stride variants), CRTS_dma_wait_value, CRTS_ssync_*, and
 * CRTS_pldm_malloc / free. Built on the same checked path as slave.h. */
#ifndef LDMSIM_CRTS_H
#define LDMSIM_CRTS_H

#include "slave.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned int crts_rply_t;

#define CRTS_tid (__ldmsim_athread_id())
#define CRTS_rid (__ldmsim_athread_row())
#define CRTS_cid (__ldmsim_athread_col())
#define CRTS_cgn (__ldmsim_athread_cgn())
#define CRTS_smng_get_tid() (__ldmsim_athread_id())

/* CRTS_init() is declared in ldmsim_athread_common.h (control and compute cores). */

LDMSIM_ATHREAD_INLINE void CRTS_dma_get(void* dst, const void* src, size_t len) {
  __ldmsim_athread_dma("CRTS_dma_get", 1, PE_MODE, src, dst, (long)len, 0, 0, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void CRTS_dma_put(void* dst, const void* src, size_t len) {
  __ldmsim_athread_dma("CRTS_dma_put", 0, PE_MODE, dst, src, (long)len, 0, 0, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void CRTS_dma_iget(void* dst, const void* src, size_t len, volatile crts_rply_t* rply) {
  __ldmsim_athread_dma("CRTS_dma_iget", 1, PE_MODE, src, dst, (long)len, 0, 0, 0xffu, rply, 0);
}
LDMSIM_ATHREAD_INLINE void CRTS_dma_iput(void* dst, const void* src, size_t len, volatile crts_rply_t* rply) {
  __ldmsim_athread_dma("CRTS_dma_iput", 0, PE_MODE, dst, src, (long)len, 0, 0, 0xffu, rply, 0);
}
/** Strided: main memory holds len / bsize blocks of bsize bytes with stride bytes skipped between them. */
LDMSIM_ATHREAD_INLINE void CRTS_dma_get_stride(void* dst, const void* src, size_t len, size_t bsize, size_t stride) {
  __ldmsim_athread_dma("CRTS_dma_get_stride", 1, PE_MODE, src, dst, (long)len, (long)bsize, (long)stride, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void CRTS_dma_put_stride(void* dst, const void* src, size_t len, size_t bsize, size_t stride) {
  __ldmsim_athread_dma("CRTS_dma_put_stride", 0, PE_MODE, dst, src, (long)len, (long)bsize, (long)stride, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void CRTS_dma_iget_stride(void* dst, const void* src, size_t len, size_t bsize, size_t stride,
                                                volatile crts_rply_t* rply) {
  __ldmsim_athread_dma("CRTS_dma_iget_stride", 1, PE_MODE, src, dst, (long)len, (long)bsize, (long)stride, 0xffu, rply,
                       0);
}
LDMSIM_ATHREAD_INLINE void CRTS_dma_iput_stride(void* dst, const void* src, size_t len, size_t bsize, size_t stride,
                                                volatile crts_rply_t* rply) {
  __ldmsim_athread_dma("CRTS_dma_iput_stride", 0, PE_MODE, dst, src, (long)len, (long)bsize, (long)stride, 0xffu, rply,
                       0);
}
/** Broadcast get to every core of the array (an ldmsim spelling of SW26010-Pro's broadcast get). */
LDMSIM_ATHREAD_INLINE void CRTS_dma_bcast_get(void* dst, const void* src, size_t len) {
  __ldmsim_athread_dma("CRTS_dma_bcast_get", 1, BCAST_MODE, src, dst, (long)len, 0, 0, 0xffu, 0, 1);
}
/* RMA: the CRTS spellings of slave.h's athread_rma_* (same arguments). */
#define CRTS_rma_iput(l_addr, l_rply, len, r_tid, r_addr, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_iput", 0, 0, (l_addr), (r_addr), (len), (r_tid), (l_rply), (r_rply), 0)
#define CRTS_rma_iget(l_addr, l_rply, len, r_tid, r_addr, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_iget", 1, 0, (l_addr), (r_addr), (len), (r_tid), (l_rply), (r_rply), 0)
#define CRTS_rma_put(l_addr, len, r_tid, r_addr, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_put", 0, 0, (l_addr), (r_addr), (len), (r_tid), 0, (r_rply), 1)
#define CRTS_rma_get(l_addr, len, r_tid, r_addr, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_get", 1, 0, (l_addr), (r_addr), (len), (r_tid), 0, (r_rply), 1)
#define CRTS_rma_ibcast(dst, src, l_rply, len, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_ibcast", 0, 3, (src), (dst), (len), 0, (l_rply), (r_rply), 0)
#define CRTS_rma_bcast(dst, src, len, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_bcast", 0, 3, (src), (dst), (len), 0, 0, (r_rply), 1)
#define CRTS_rma_row_ibcast(dst, src, len, l_rply, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_row_ibcast", 0, 1, (src), (dst), (len), 0, (l_rply), (r_rply), 0)
#define CRTS_rma_col_ibcast(dst, src, len, l_rply, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_col_ibcast", 0, 2, (src), (dst), (len), 0, (l_rply), (r_rply), 0)
#define CRTS_rma_row_bcast(dst, src, len, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_row_bcast", 0, 1, (src), (dst), (len), 0, 0, (r_rply), 1)
#define CRTS_rma_col_bcast(dst, src, len, r_rply) \
  __ldmsim_athread_rma("CRTS_rma_col_bcast", 0, 2, (src), (dst), (len), 0, 0, (r_rply), 1)
#define CRTS_rma_wait_value(rply, value) __ldmsim_athread_rma_wait("CRTS_rma_wait_value", (rply), (value))
#define CRTS_rma_barrier() __ldmsim_athread_sync("CRTS_rma_barrier", ARRAY_SCOPE, ~0u)

/** Waits until *rply reaches value. */
LDMSIM_ATHREAD_INLINE void CRTS_dma_wait_value(volatile crts_rply_t* rply, int value) {
  __ldmsim_athread_wait("CRTS_dma_wait_value", rply, value);
}
LDMSIM_ATHREAD_INLINE void CRTS_ssync_array(void) {
  __ldmsim_athread_sync("CRTS_ssync_array", ARRAY_SCOPE, ~0u);
}
LDMSIM_ATHREAD_INLINE void CRTS_ssync_row(void) {
  __ldmsim_athread_sync("CRTS_ssync_row", ROW_SCOPE, ~0u);
}
LDMSIM_ATHREAD_INLINE void CRTS_ssync_col(void) {
  __ldmsim_athread_sync("CRTS_ssync_col", COL_SCOPE, ~0u);
}
LDMSIM_ATHREAD_INLINE void* CRTS_pldm_malloc(size_t bytes) {
  return __ldmsim_athread_ldm_malloc("CRTS_pldm_malloc", bytes);
}
LDMSIM_ATHREAD_INLINE void CRTS_pldm_free(void* ptr, size_t bytes) {
  (void)bytes;
  __ldmsim_athread_ldm_free("CRTS_pldm_free", ptr);
}
LDMSIM_ATHREAD_INLINE unsigned long CRTS_stime_cycle(void) {
  return __ldmsim_athread_cycle();
}
LDMSIM_ATHREAD_INLINE unsigned long CRTS_time_cycle(void) {
  return __ldmsim_athread_cycle();
}

/* ---- CRTS collectives over the cores of the group ---- */
/** Element types and operations of CRTS_scoll_redurt. */
enum { CRTS_int = 0, CRTS_uint = 1, CRTS_long = 2, CRTS_ulong = 3, CRTS_float = 4, CRTS_double = 5 };
enum { OP_add = 0, OP_and = 1, OP_or = 2, OP_xor = 3, OP_eqv = 4, OP_min = 5, OP_max = 6 };
/** All-reduce: every core of the group passes `units` elements at src and gets the reduction over all cores, in
 * core-id order, at dst (src == dst allowed); redu_buf / buf_item (the SDK's scratch space) are not needed. */
LDMSIM_ATHREAD_INLINE int CRTS_scoll_redurt(void* src, void* dst, int units, int dtype, int optype, void* redu_buf,
                                            int buf_item) {
  (void)redu_buf;
  (void)buf_item;
  __ldmsim_athread_allreduce("CRTS_scoll_redurt", src, dst, units, dtype, optype);
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif
