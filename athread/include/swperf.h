/* The SDK's performance-counter header, for slave code: penv_slave0_cycle_init / penv_slave0_cycle_count read the
 * core's simulated cycle counter. The SDK's other events (cache accesses and misses, gld, float and IPC counts) are
 * not simulated and not declared, so a program that reads them fails to build rather than reading made-up values. */
#ifndef LDMSIM_SWPERF_H
#define LDMSIM_SWPERF_H

#include "ldmsim_athread_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Starts the cycle counter (it always runs: nothing to do). */
static inline void penv_slave0_cycle_init(void) {}
/** The core's simulated cycle counter (after its outstanding DMA, as athread_time_cycle). */
static inline void penv_slave0_cycle_count(unsigned long* count) {
  *count = __ldmsim_athread_cycle();
}

#ifdef __cplusplus
}
#endif

#endif
