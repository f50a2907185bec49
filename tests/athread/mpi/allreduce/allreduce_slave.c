/* Each core sums its PER_CORE values (one get, one put of the sum) and takes the rank's extra simulated time, so the
 * ranks enter MPI_Allreduce at different cycles. */
#include <slave.h>

#include "allreduce.h"

__thread_local double values[PER_CORE];
__thread_local double sum[4];

void partial_sums(void* p) {
  sum_arg* arg = (sum_arg*)p;
  volatile int got = 0, put = 0;
  athread_get(PE_MODE, arg->data + _MYID * PER_CORE, values, PER_CORE * sizeof(double), (void*)&got, 0, 0, 0);
  while (got != 1) {
  }
  sum[0] = 0;
  for (int i = 0; i < PER_CORE; ++i) sum[0] += values[i];
  athread_put(PE_MODE, sum, arg->partial + _MYID, sizeof(double), (void*)&put, 0, 0);
  while (put != 1) {
  }
  ldmsim_athread_charge(arg->extra_cycles);
}
