/* athread compute-core (CPE) API for slave files built with ldmsim_add_athread_program: identity (_MYID,
 * _ROW, _COL, _CGN), athread_get / athread_put with reply counters, athread_syn, ldm_malloc / ldm_free,
 * __thread_local core-private globals and the cycle counter. See docs/athread.md for the semantics. */
#ifndef LDMSIM_SLAVE_H
#define LDMSIM_SLAVE_H

#include "ldmsim_athread_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Core-private globals live in the ldmsim_tl section; the runtime swaps it with each core's local store. */
#define __thread_local __attribute__((section("ldmsim_tl")))
#define __thread_local_fix __thread_local
#define __thread_local_share __thread_local
#define __ldm __thread_local
/* Core-private data of one kernel (the SDK places it in a per-kernel ldm section): private like __thread_local. */
#define __thread_kernel(kname) __thread_local

#define _MYID (__ldmsim_athread_id())
#define _ROW (__ldmsim_athread_row())
#define _COL (__ldmsim_athread_col())
#define _CGN (__ldmsim_athread_cgn())
#define _PEN (__ldmsim_athread_id()) /* SW26010-Pro's spelling of the core id in the group */

/** The calling core's id (row * 8 + col) for id == -1. */
LDMSIM_ATHREAD_INLINE int athread_get_id(int core) {
  (void)core;
  return __ldmsim_athread_id();
}
/** DMA main memory -> ldm; *reply grows by one when it completes. stride = bytes skipped between bsize blocks. */
LDMSIM_ATHREAD_INLINE int athread_get(dma_mode mode, const void* src, void* dest, int len, volatile void* reply,
                                      char mask, int stride, int bsize) {
  __ldmsim_athread_dma("athread_get", 1, (int)mode, src, dest, len, bsize, stride, (unsigned)(unsigned char)mask, reply,
                       0);
  return 0;
}
/** DMA ldm -> main memory; *reply grows by one when it completes. */
LDMSIM_ATHREAD_INLINE int athread_put(dma_mode mode, const void* src, void* dest, int len, volatile void* reply,
                                      int stride, int bsize) {
  __ldmsim_athread_dma("athread_put", 0, (int)mode, dest, src, len, bsize, stride, 0xffu, reply, 0);
  return 0;
}
/** Barrier of the cores of a row, a column or the whole array. */
LDMSIM_ATHREAD_INLINE void athread_syn(scope s, unsigned mask) {
  __ldmsim_athread_sync("athread_syn", (int)s, mask);
}
/** Allocates from the calling core's local store (NULL never: a trap when it does not fit). */
LDMSIM_ATHREAD_INLINE void* ldm_malloc(size_t bytes) {
  return __ldmsim_athread_ldm_malloc("ldm_malloc", bytes);
}
/** Frees an ldm_malloc'ed block (the size is ignored). */
LDMSIM_ATHREAD_INLINE void ldm_free(void* ptr, size_t bytes) {
  (void)bytes;
  __ldmsim_athread_ldm_free("ldm_free", ptr);
}
/** The core's simulated cycle counter (replaces the sw_64 `rcsr` / `rtc` inline assembly). */
LDMSIM_ATHREAD_INLINE unsigned long athread_time_cycle(void) {
  return __ldmsim_athread_cycle();
}
LDMSIM_ATHREAD_INLINE unsigned long athread_stime_cycle(void) {
  return __ldmsim_athread_cycle();
}
/* rtc() and RTC() read the cycle counter. Many kernels define a helper of that name themselves (most often
 * `static inline void rtc(unsigned long *counter)` over `rcsr`): a use with one argument, their definition
 * included, goes to a name of the program's own (ldmsim_program_rtc / ldmsim_program_RTC), so such a helper
 * compiles and is called as written. A program macro of that name replaces these (GCC warns). */
#define __ldmsim_rtc_pick(_0, _1, which, ...) which
#define __ldmsim_rtc_none() athread_time_cycle()
#define __ldmsim_rtc_one(x) ldmsim_program_rtc(x)
#define __ldmsim_RTC_one(x) ldmsim_program_RTC(x)
#define rtc(...) __ldmsim_rtc_pick(_ __VA_OPT__(, ) __VA_ARGS__, __ldmsim_rtc_one, __ldmsim_rtc_none)(__VA_ARGS__)
#define RTC(...) __ldmsim_rtc_pick(_ __VA_OPT__(, ) __VA_ARGS__, __ldmsim_RTC_one, __ldmsim_rtc_none)(__VA_ARGS__)

/* ---- SW26010 register communication ----
 * REG_PUTR(var, dst) sends var (up to 256 bits) to column dst of this core's row (8: the whole row), REG_PUTC
 * to row dst of its column; REG_GETR(var) / REG_GETC(var) receive into var, blocking. These are the names of
 * the macros kernels define over the putr / putc / getr / getc instructions; a program that defines them itself
 * with inline assembly must drop those definitions (docs/athread.md). simd_putr / simd_putc / simd_getr /
 * simd_getc are the SDK's spellings (`v = simd_getr(v);`). */
#ifdef __cplusplus
}
extern "C++" {
template <class T>
inline void __ldmsim_reg_put(const char* api, int bus, const T& value, int dst) {
  static_assert(sizeof(T) <= 32, "register communication moves at most 256 bits");
  __ldmsim_athread_reg_put(api, bus, &value, sizeof(T), dst);
}
template <class T>
inline T __ldmsim_reg_get(const char* api, int bus, const T&) {
  static_assert(sizeof(T) <= 32, "register communication moves at most 256 bits");
  T value;
  __ldmsim_athread_reg_get(api, bus, &value, sizeof(T));
  return value;
}
template <class T>
inline void __ldmsim_reg_get_into(const char* api, int bus, T& var) {
  static_assert(sizeof(T) <= 32, "register communication moves at most 256 bits");
  __ldmsim_athread_reg_get(api, bus, &var, sizeof(T));
}
}
#define REG_PUTR(var, dst) __ldmsim_reg_put("REG_PUTR", 0, (var), (dst))
#define REG_PUTC(var, dst) __ldmsim_reg_put("REG_PUTC", 1, (var), (dst))
#define REG_GETR(var) __ldmsim_reg_get_into("REG_GETR", 0, (var))
#define REG_GETC(var) __ldmsim_reg_get_into("REG_GETC", 1, (var))
#define simd_putr(var, dst) __ldmsim_reg_put("simd_putr", 0, (var), (dst))
#define simd_putc(var, dst) __ldmsim_reg_put("simd_putc", 1, (var), (dst))
#define simd_getr(var) __ldmsim_reg_get("simd_getr", 0, (var))
#define simd_getc(var) __ldmsim_reg_get("simd_getc", 1, (var))
extern "C" {
#else
/* C has no templates: a put copies its argument (an lvalue or not), a get of the SDK spelling is a GNU statement
 * expression of the argument's type (`v = simd_getr(v);`). */
#define __ldmsim_reg_put_c(api, bus, var, dst)                                 \
  do {                                                                         \
    __typeof__(var) ldmsim_reg_ = (var);                                       \
    __ldmsim_athread_reg_put(api, bus, &ldmsim_reg_, sizeof ldmsim_reg_, dst); \
  } while (0)
#define __ldmsim_reg_get_c(api, bus, var)                                 \
  ({                                                                      \
    __typeof__(var) ldmsim_reg_;                                          \
    __ldmsim_athread_reg_get(api, bus, &ldmsim_reg_, sizeof ldmsim_reg_); \
    ldmsim_reg_;                                                          \
  })
#define REG_PUTR(var, dst) __ldmsim_reg_put_c("REG_PUTR", 0, var, (dst))
#define REG_PUTC(var, dst) __ldmsim_reg_put_c("REG_PUTC", 1, var, (dst))
#define REG_GETR(var) __ldmsim_athread_reg_get("REG_GETR", 0, &(var), sizeof(var))
#define REG_GETC(var) __ldmsim_athread_reg_get("REG_GETC", 1, &(var), sizeof(var))
#define simd_putr(var, dst) __ldmsim_reg_put_c("simd_putr", 0, var, (dst))
#define simd_putc(var, dst) __ldmsim_reg_put_c("simd_putc", 1, var, (dst))
#define simd_getr(var) __ldmsim_reg_get_c("simd_getr", 0, var)
#define simd_getc(var) __ldmsim_reg_get_c("simd_getc", 1, var)
#endif

/* ---- SW26010-Pro athread_dma_* aliases (dst first, as on SW26010-Pro) ---- */
typedef unsigned int athread_rply_t;
LDMSIM_ATHREAD_INLINE void athread_dma_get(void* dst, const void* src, int len) {
  __ldmsim_athread_dma("athread_dma_get", 1, PE_MODE, src, dst, len, 0, 0, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void athread_dma_put(void* dst, const void* src, int len) {
  __ldmsim_athread_dma("athread_dma_put", 0, PE_MODE, dst, src, len, 0, 0, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void athread_dma_iget(void* dst, const void* src, int len, volatile athread_rply_t* rply) {
  __ldmsim_athread_dma("athread_dma_iget", 1, PE_MODE, src, dst, len, 0, 0, 0xffu, rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_dma_iput(void* dst, const void* src, int len, volatile athread_rply_t* rply) {
  __ldmsim_athread_dma("athread_dma_iput", 0, PE_MODE, dst, src, len, 0, 0, 0xffu, rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_dma_iget_stride(void* dst, const void* src, int len, int bsize, int stride,
                                                   volatile athread_rply_t* rply) {
  __ldmsim_athread_dma("athread_dma_iget_stride", 1, PE_MODE, src, dst, len, bsize, stride, 0xffu, rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_dma_iput_stride(void* dst, const void* src, int len, int bsize, int stride,
                                                   volatile athread_rply_t* rply) {
  __ldmsim_athread_dma("athread_dma_iput_stride", 0, PE_MODE, dst, src, len, bsize, stride, 0xffu, rply, 0);
}
/** Blocking strided transfers: main memory holds len / bsize blocks of bsize bytes, stride bytes between them. */
LDMSIM_ATHREAD_INLINE void athread_dma_get_stride(void* dst, const void* src, int len, int bsize, int stride) {
  __ldmsim_athread_dma("athread_dma_get_stride", 1, PE_MODE, src, dst, len, bsize, stride, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void athread_dma_put_stride(void* dst, const void* src, int len, int bsize, int stride) {
  __ldmsim_athread_dma("athread_dma_put_stride", 0, PE_MODE, dst, src, len, bsize, stride, 0xffu, 0, 1);
}
LDMSIM_ATHREAD_INLINE void athread_dma_wait_value(volatile athread_rply_t* rply, int value) {
  __ldmsim_athread_wait("athread_dma_wait_value", rply, value);
}
/* ---- SW26010-Pro RMA between local stores (remote addresses: the same ldm offset on the other core) ---- */
LDMSIM_ATHREAD_INLINE void athread_rma_iput(void* l_addr, volatile athread_rply_t* l_rply, int len, int r_tid,
                                            void* r_addr, volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_iput", 0, 0, l_addr, r_addr, len, r_tid, l_rply, r_rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_rma_iget(void* l_addr, volatile athread_rply_t* l_rply, int len, int r_tid,
                                            void* r_addr, volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_iget", 1, 0, l_addr, r_addr, len, r_tid, l_rply, r_rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_rma_put(void* l_addr, int len, int r_tid, void* r_addr,
                                           volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_put", 0, 0, l_addr, r_addr, len, r_tid, 0, r_rply, 1);
}
LDMSIM_ATHREAD_INLINE void athread_rma_get(void* l_addr, int len, int r_tid, void* r_addr,
                                           volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_get", 1, 0, l_addr, r_addr, len, r_tid, 0, r_rply, 1);
}
/** Broadcast to the same offset of every core of the group (this one included); note l_rply before len. */
LDMSIM_ATHREAD_INLINE void athread_rma_ibcast(void* dst, void* src, volatile athread_rply_t* l_rply, int len,
                                              volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_ibcast", 0, 3, src, dst, len, 0, l_rply, r_rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_rma_bcast(void* dst, void* src, int len, volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_bcast", 0, 3, src, dst, len, 0, 0, r_rply, 1);
}
LDMSIM_ATHREAD_INLINE void athread_rma_row_ibcast(void* dst, void* src, int len, volatile athread_rply_t* l_rply,
                                                  volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_row_ibcast", 0, 1, src, dst, len, 0, l_rply, r_rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_rma_col_ibcast(void* dst, void* src, int len, volatile athread_rply_t* l_rply,
                                                  volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_col_ibcast", 0, 2, src, dst, len, 0, l_rply, r_rply, 0);
}
LDMSIM_ATHREAD_INLINE void athread_rma_row_bcast(void* dst, void* src, int len, volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_row_bcast", 0, 1, src, dst, len, 0, 0, r_rply, 1);
}
LDMSIM_ATHREAD_INLINE void athread_rma_col_bcast(void* dst, void* src, int len, volatile athread_rply_t* r_rply) {
  __ldmsim_athread_rma("athread_rma_col_bcast", 0, 2, src, dst, len, 0, 0, r_rply, 1);
}
/** Waits until *rply reaches value (other cores' RMA raise it; a plain spin on such a reply hangs the host). */
LDMSIM_ATHREAD_INLINE void athread_rma_wait_value(volatile athread_rply_t* rply, int value) {
  __ldmsim_athread_rma_wait("athread_rma_wait_value", rply, value);
}
LDMSIM_ATHREAD_INLINE void athread_rma_barrier(void) {
  __ldmsim_athread_sync("athread_rma_barrier", ARRAY_SCOPE, ~0u);
}

LDMSIM_ATHREAD_INLINE void athread_ssync_array(void) {
  __ldmsim_athread_sync("athread_ssync_array", ARRAY_SCOPE, ~0u);
}
/** A barrier of every core of every core group the spawn runs on (they run interleaved on one host thread). */
LDMSIM_ATHREAD_INLINE void athread_ssync_node(void) {
  __ldmsim_athread_sync("athread_ssync_node", 3, ~0u);
}

#ifdef __cplusplus
}
#endif

#endif
