/* athread control-core (MPE) API for programs built with ldmsim_add_athread_program: athread_init, spawn of a
 * slave function on the compute cores of core group 0 (athread_spawn(f, arg) runs slave_f), join and halt.
 * The machine is an ldmsim::Machine of the arch named by LDMSIM_ARCH (default sw26010). */
#ifndef LDMSIM_ATHREAD_H
#define LDMSIM_ATHREAD_H

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ldmsim_athread_common.h"

/* What the SDK's athread.h brings along and programs use without defining it: the C headers above, TRUE /
 * FALSE and the separator line HLINE. */
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#ifndef HLINE
#define HLINE "==================================================================\n"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The host's name of slave function x, as in the SDK: `extern void SLAVE_FUN(func)(void*);` (or the SDK
 * examples' `extern SLAVE_FUN(func)();`). */
#define SLAVE_FUN(x) slave_##x

/** Creates the simulated machine (idempotent). Returns 0. */
int athread_init(void);
/** Runs slave_fn(arg) on every compute core of core group 0; returns at once (join waits). */
#define athread_spawn(fn, arg) __ldmsim_athread_spawn((void (*)(void*))slave_##fn, (void*)(arg), #fn)
/** The SDK's spawn of a function pointer (SW26010: 2 arguments; SW26010-Pro: a third, the cache-flush flag). */
#define __real_athread_spawn(fn, arg, ...) __ldmsim_athread_spawn((void (*)(void*))(fn), (void*)(arg), #fn)
/** Waits for the spawned function on every core; on a trap prints the diagnostic and exits with status 3. */
int athread_join(void);
/** Ends the athread session (writes the trace named by LDMSIM_TRACE, if set). Returns 0. */
int athread_halt(void);
/** Compute cores of one core group. */
int athread_get_max_threads(void);
/** Limits the cores that run the next spawns to ids [0, n); returns 0 or -1 on a bad n. */
int athread_set_num_threads(int n);
/** Simulated cycles so far, of the slowest core group; a spawn in flight is finished first (as at its join, which
 * still reports its trap), so the value never depends on host timing. */
unsigned long athread_host_cycles(void);

/* SW26010-Pro spells the same calls with a CRTS prefix on the control core; in C++ its spawn takes a function
 * pointer (`CRTS_athread_spawn(reinterpret_cast<void*>(SLAVE_FUN(f)), &arg)`), in C a name, as in the SDK. */
#define CRTS_athread_init athread_init
#define CRTS_athread_halt athread_halt
#define CRTS_athread_join athread_join
#ifdef __cplusplus
#define CRTS_athread_spawn(fn, arg) __ldmsim_athread_spawn((void (*)(void*))(fn), (void*)(arg), #fn)
#else
#define CRTS_athread_spawn(fn, arg) athread_spawn(fn, arg)
#endif

/* ---- SW26010-Pro: every core group of the node (6 on sw26010pro) from one control core ---- */
/** Initialises the athread session for all core groups. Returns 0. */
int athread_init_cgs(void);
/** Runs slave_fn(arg) on every compute core of every core group (_CGN tells them apart). */
#define athread_spawn_cgs(fn, arg) __ldmsim_athread_spawn_cgs((void (*)(void*))slave_##fn, (void*)(arg), #fn)
#define __real_athread_spawn_cgs(fn, arg, ...) __ldmsim_athread_spawn_cgs((void (*)(void*))(fn), (void*)(arg), #fn)
/** Waits for the spawn on every core group. */
int athread_join_cgs(void);
/** Ends the multi-group session (as athread_halt). */
int athread_halt_cgs(void);
int __ldmsim_athread_spawn_cgs(void (*fn)(void*), void* arg, const char* name);
/** The core group of the calling control core: 0 (ldmsim has one control core). */
int current_array_id(void);
/** Memory every core group can reach (main memory is shared host memory here). */
void* _sw_xmalloc(size_t bytes);
void _sw_xfree(void* ptr);

#ifdef __cplusplus
}
#endif

#endif
