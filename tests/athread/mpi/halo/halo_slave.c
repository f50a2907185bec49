/* One Jacobi sweep of the rank's block: each core takes interior rows _MYID + 1, _MYID + 1 + CORES, ...; three gets
 * (the rows above, at and below), the 5-point average, one put. */
#include <slave.h>

#include "halo.h"

__thread_local double up[W], mid[W], down[W], out[LOCAL];

void jacobi_sweep(void* p) {
  halo_arg* arg = (halo_arg*)p;
  volatile int got = 0, put = 0;
  int gets = 0, puts = 0;
  for (int i = 1 + _MYID; i <= LOCAL; i += CORES) {
    athread_get(PE_MODE, (void*)(arg->src + (i - 1) * W), up, W * sizeof(double), (void*)&got, 0, 0, 0);
    athread_get(PE_MODE, (void*)(arg->src + i * W), mid, W * sizeof(double), (void*)&got, 0, 0, 0);
    athread_get(PE_MODE, (void*)(arg->src + (i + 1) * W), down, W * sizeof(double), (void*)&got, 0, 0, 0);
    gets += 3;
    while (got != gets) {
    }
    for (int j = 1; j <= LOCAL; ++j) out[j - 1] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
    athread_put(PE_MODE, out, arg->dst + i * W + 1, LOCAL * sizeof(double), (void*)&put, 0, 0);
    puts += 1;
    while (put != puts) {
    }
  }
}
