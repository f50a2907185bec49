#include <crts.h>
#include <slave.h>

extern long received[64][8], broadcast[64], row_value[64];
extern unsigned long ring_cycles[64];
extern int deadlock;

__thread_local long outbox[8] __attribute__((aligned(64)));
__thread_local long inbox[8] __attribute__((aligned(64)));
__thread_local long scalar, row_scalar;
__thread_local athread_rply_t l_rply, r_rply, b_l_rply, b_r_rply, row_l_rply, row_r_rply;

__thread_local long first_word;
__thread_local athread_rply_t first_l, first_r, late_l, late_r;
__thread_local long late_inbox;

void rma_ring(void) {
  const int me = CRTS_tid;
  /* Core 0's very first action broadcasts a word; the others have not even started: it must not be lost to
   * their __thread_local set-up. */
  if (me == 0) {
    first_word = 77;
    athread_rma_ibcast(&first_word, &first_word, &first_l, sizeof(first_word), &first_r);
    athread_rma_wait_value(&first_l, 1);
  } else {
    athread_rma_wait_value(&first_r, 1);
  }
  l_rply = r_rply = b_l_rply = b_r_rply = row_l_rply = row_r_rply = 0;
  for (int k = 0; k < 8; ++k) outbox[k] = 100 * me + k;
  athread_ssync_array(); /* every reply word is cleared before anyone sends */
  if (deadlock && me == 5) {
    athread_rma_wait_value(&r_rply, 2); /* only one RMA ever arrives */
  }
  const unsigned long start = athread_stime_cycle();
  athread_rma_iput(outbox, &l_rply, sizeof(outbox), (me + 1) % 64, inbox, &r_rply);
  athread_rma_wait_value(&l_rply, 1);
  athread_rma_wait_value(&r_rply, 1);
  ring_cycles[me] = athread_stime_cycle() - start;

  if (me == 0) {
    scalar = 4242;
    athread_rma_ibcast(&scalar, &scalar, &b_l_rply, sizeof(scalar), &b_r_rply);
    athread_rma_wait_value(&b_l_rply, 1);
  } else {
    athread_rma_wait_value(&b_r_rply, 1);
  }
  if (CRTS_cid == 0) {
    row_scalar = 1000 + CRTS_rid;
    athread_rma_row_ibcast(&row_scalar, &row_scalar, sizeof(row_scalar), &row_l_rply, &row_r_rply);
    athread_rma_wait_value(&row_l_rply, 1);
  } else {
    athread_rma_wait_value(&row_r_rply, 1);
  }
  /* Clearing one's own reply word after a barrier, then receiving: the clear is earlier in simulated time. */
  athread_ssync_array();
  late_l = late_r = 0;
  long mine = me;
  athread_rma_iput(&mine, &late_l, sizeof(mine), (me + 63) % 64, &late_inbox, &late_r);
  athread_rma_wait_value(&late_r, 1);
  athread_rma_wait_value(&late_l, 1);
  if (first_word != 77 || late_inbox != (me + 1) % 64) scalar = -1;
  athread_dma_put(received[me], inbox, sizeof(inbox));
  athread_dma_put(&broadcast[me], &scalar, sizeof(scalar));
  athread_dma_put(&row_value[me], &row_scalar, sizeof(row_scalar));
}
