/* athread control-core (MPE) API for programs built with ldmsim_add_athread_program: athread_init, spawn of a
 * slave function on the compute cores of core group 0 (athread_spawn(f, arg) runs slave_f), join and halt.
 * The machine is an ldmsim::Machine of the arch named by LDMSIM_ARCH (default sw26010). */
#ifndef LDMSIM_ATHREAD_H
#define LDMSIM_ATHREAD_H

#include "ldmsim_athread_common.h"

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
/** Waits for the spawned function on every core; on a trap prints the diagnostic and exits with status 3. */
int athread_join(void);
/** Ends the athread session (writes the trace named by LDMSIM_TRACE, if set). Returns 0. */
int athread_halt(void);
/** Compute cores of one core group. */
int athread_get_max_threads(void);
/** Limits the cores that run the next spawns to ids [0, n); returns 0 or -1 on a bad n. */
int athread_set_num_threads(int n);
/** Simulated cycles of core group 0 so far (the slowest core of each launch). */
unsigned long athread_host_cycles(void);

/* SW26010-Pro spells the same calls with a CRTS prefix on the control core. */
#define CRTS_athread_init athread_init
#define CRTS_athread_halt athread_halt

#ifdef __cplusplus
}
#endif

#endif
