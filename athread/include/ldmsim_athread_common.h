/* Definitions shared by the ldmsim athread/CRTS headers (control core and compute cores): DMA modes and
 * operations, sync scopes and the C entry points the macros of athread.h / slave.h / dma.h / crts.h map to.
 * Not a Sunway header: include athread.h, slave.h, dma.h, simd.h or crts.h instead. */
#ifndef LDMSIM_ATHREAD_COMMON_H
#define LDMSIM_ATHREAD_COMMON_H

#include <stddef.h>

/* Shared (cross-segment) and uncached globals, on either side: ordinary globals (main memory is host memory). */
#ifndef __cross
#define __cross
#endif
#ifndef __uncached
#define __uncached
#endif

/* The headers' small API functions, inlined even at -O0, so the code address of a DMA call lies in the program's
 * own function and checking reports give the line of the call (docs/checking.md). */
#define LDMSIM_ATHREAD_INLINE static inline __attribute__((always_inline))

#ifdef __cplusplus
extern "C" {
#endif

/** DMA delivery modes, as in athread (ROW_MODE and BROW_MODE both broadcast to the issuer's row). */
typedef enum { PE_MODE = 0, BCAST_MODE = 1, ROW_MODE = 2, BROW_MODE = 3, RANK_MODE = 4 } dma_mode;
/** DMA directions of the dma_desc API. */
typedef enum { DMA_PUT = 0, DMA_GET = 1, DMA_PUT_P = 2, DMA_GET_P = 3, DMA_BARRIER = 5 } DMA_OP;
/** athread_syn scopes. */
typedef enum { ROW_SCOPE = 0, COL_SCOPE = 1, ARRAY_SCOPE = 2 } scope;

/** CRTS start-up: athread_init on the control core, nothing on a compute core. */
void CRTS_init(void);
/** Spawns slave function `fn` (already renamed slave_<name>) on core group 0. */
int __ldmsim_athread_spawn(void (*fn)(void*), void* arg, const char* name);

/** Binds the calling host thread to host thread index `index` (the pthread_create wrapper of tl_anchor.c). */
void __ldmsim_athread_bind_thread(int index);
/** The next host thread index (1, 2, ...), in the order the program's threads are created. */
int __ldmsim_athread_next_thread(void);

/* ---- compute-core side (slave.h, dma.h, crts.h) ---- */
int __ldmsim_athread_id(void);
int __ldmsim_athread_row(void);
int __ldmsim_athread_col(void);
int __ldmsim_athread_cgn(void);
/** The general DMA issue behind every athread/CRTS DMA call; api names the call in diagnostics. */
void __ldmsim_athread_dma(const char* api, int get, int mode, const void* mem, const void* ldm, long len, long bsize,
                          long stride, unsigned mask, volatile void* reply, int blocking);
/** Waits until *reply >= value (charges the requests counted on that reply); api names the call. */
void __ldmsim_athread_wait(const char* api, volatile void* reply, long value);
/** A barrier over a scope (0 row, 1 column, 2 array) with a core mask. */
void __ldmsim_athread_sync(const char* api, int scope, unsigned mask);
/** The core's simulated clock (after charging outstanding DMA). */
unsigned long __ldmsim_athread_cycle(void);
/** Charges `cycles` simulated cycles of computation to the calling core (an ldmsim extension). */
void ldmsim_athread_charge(unsigned long cycles);
void* __ldmsim_athread_ldm_malloc(const char* api, size_t bytes);
void __ldmsim_athread_ldm_free(const char* api, void* ptr);
/** Register communication (SW26010): sends `bytes` (<= 32) at data over the row (bus 0) or column (bus 1) bus to
 * column / row dst of this core's row / column (8: every other core of it); blocks while the buffer is full. */
void __ldmsim_athread_reg_put(const char* api, int bus, const void* data, size_t bytes, int dst);
/** Receives the oldest value on the row / column bus into data (its first `bytes` bytes), blocking. */
void __ldmsim_athread_reg_get(const char* api, int bus, void* data, size_t bytes);
/** RMA (SW26010-Pro): op 0 put / 1 get, reach 0 one core (peer) / 1 row / 2 column / 3 the whole group
 * (broadcast puts, the issuer included); remote is an address in the issuer's own layout, meaning the same ldm
 * offset on the other cores; l_rply grows by one on this core and r_rply on every receiver (the source core of
 * a get) when the data has landed; blocking waits for it. */
void __ldmsim_athread_rma(const char* api, int op, int reach, void* local, const void* remote, long len, int peer,
                          volatile void* l_rply, volatile void* r_rply, int blocking);
/** Waits until an RMA reply counter reaches value, blocking while other cores may still raise it. */
void __ldmsim_athread_rma_wait(const char* api, volatile void* rply, long value);
/** All-reduce over every core of the group: `units` elements of `dtype` (CRTS_int ... CRTS_double) combined with
 * `op` (OP_add ...), in core-id order, into dst on every core. */
void __ldmsim_athread_allreduce(const char* api, const void* src, void* dst, int units, int dtype, int op);
/** Traps on a call ldmsim does not simulate, with why. */
void __ldmsim_athread_unsupported(const char* api, const char* why);
/** Reports a misaligned simd_load/simd_store (a lint warning, once per core per spawn) and charges its second ldm
 * access. */
void __ldmsim_athread_simd_misaligned(const char* api, const void* addr, size_t alignment);

#ifdef __cplusplus
}
#endif

#endif
