#include <crts.h>
#include <slave.h>

extern long written[6 * 64], seen[6 * 64];
extern unsigned long after_barrier[6 * 64];
extern int skip_mode;

void node_sync(void* unused) {
  (void)unused;
  const int cg = CRTS_cgn, id = CRTS_tid;
  long mine = 1000 * cg + id;
  /* later groups work longer, so without the barrier group 0 would read before group 1 wrote */
  ldmsim_athread_charge(100 * (unsigned long)cg);
  athread_dma_put(&written[cg * 64 + id], &mine, sizeof(mine));
  if (skip_mode && cg == 3 && id == 5) return;
  athread_ssync_node();
  unsigned long now = athread_time_cycle();
  long theirs;
  athread_dma_get(&theirs, &written[((cg + 1) % 6) * 64 + id], sizeof(theirs));
  athread_dma_put(&seen[cg * 64 + id], &theirs, sizeof(theirs));
  athread_dma_put(&after_barrier[cg * 64 + id], &now, sizeof(now));
}
