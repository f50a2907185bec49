#include <crts.h>
#include <simd.h>
#include <slave.h>
#include <swperf.h>

#define LEN 64

struct args {
  double* r;
  double* inv;
};

extern __cross double norm1_seen[];
extern __cross long longest_seen[];
extern __cross unsigned long kernel_cycles[];

__thread_kernel("cg_norms") double r_local[LEN] __attribute__((aligned(64)));
__thread_kernel("cg_norms") double reducebuf[64];

void cg_norms(struct args* a) {
  unsigned long t0, t1;
  int id = CRTS_tid, i;
  double local = 0, sum = 0;
  long mine = id * 7, longest = 0;
  union {
    int512 bits;
    doublev8 v;
  } x, mask;
  doublev8 acc = simd_vcpyfd(0.0), recip;

  penv_slave0_cycle_init();
  penv_slave0_cycle_count(&t0);
  CRTS_dma_get(r_local, a->r + id * LEN, LEN * sizeof(double));
  mask.bits = simd_set_int512(0x7fffffffffffffffL, 0x7fffffffffffffffL, 0x7fffffffffffffffL, 0x7fffffffffffffffL,
                              0x7fffffffffffffffL, 0x7fffffffffffffffL, 0x7fffffffffffffffL, 0x7fffffffffffffffL);
  for (i = 0; i < LEN; i += 8) {
    simd_load(x.v, &r_local[i]);
    recip = simd_vfrecpd(x.v);
    simd_store(recip, &r_local[i]);
    x.bits &= mask.bits;
    acc += x.v;
  }
  local = simd_reduc_plusd(acc);
  CRTS_scoll_redurt(&local, &sum, 1, CRTS_double, OP_add, reducebuf, 64);
  CRTS_scoll_redurt(&mine, &longest, 1, CRTS_long, OP_max, reducebuf, 64);
  CRTS_dma_put(a->inv + id * LEN, r_local, LEN * sizeof(double));
  penv_slave0_cycle_count(&t1);
  norm1_seen[id] = sum;
  longest_seen[id] = longest;
  kernel_cycles[id] = t1 - t0;
}
