/* Corpus: the norm and dot-product reductions of a conjugate-gradient solver on SW26010-Pro: |r| summed with an
 * int512 sign mask, CRTS_scoll_redurt all-reductions (double sum, long max), 1 / x with simd_vfrecpd,
 * __thread_kernel and __cross data, and the kernel timing itself with the swperf.h cycle counter. */
#include <athread.h>
#include <crts.h>
#include <math.h>
#include <stdio.h>

#define CORES 64
#define LEN 64

struct args {
  double* r;
  double* inv;
};

double r[CORES * LEN], inv[CORES * LEN];
double norm1_seen[CORES];
long longest_seen[CORES];
unsigned long kernel_cycles[CORES];

extern SLAVE_FUN(cg_norms)();

int main(void) {
  int i, bad = 0;
  double want = 0;
  struct args a = {r, inv};
  for (i = 0; i < CORES * LEN; i++) {
    r[i] = (i % 2 ? -1.0 : 1.0) * (1 + i % 9);
    want += fabs(r[i]);
  }
  CRTS_init();
  athread_spawn(cg_norms, &a);
  athread_join();
  athread_halt();
  for (i = 0; i < CORES; i++) {
    if (norm1_seen[i] != want) bad++;
    if (longest_seen[i] != 63 * 7) bad++;
    if (kernel_cycles[i] == 0) bad++;
  }
  for (i = 0; i < CORES * LEN; i++) {
    if (inv[i] != 1.0 / r[i]) bad++;
  }
  printf("crts_reduce ok: %d mismatches, |r|_1 = %.1f\n", bad, norm1_seen[0]);
  return bad != 0;
}
