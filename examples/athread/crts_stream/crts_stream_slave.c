/* CRTS triad: each core double-buffers 1024-element blocks through CRTS_pldm_malloc'ed buffers with
 * CRTS_dma_iget / CRTS_dma_iput and CRTS_dma_wait_value. */
#include <crts.h>

#define LEN (64 * 1024 * 2)
#define BS 1024

extern double a[LEN], b[LEN], c[LEN];
extern double scalar;

void triad(void) {
  CRTS_init();
  double* lb = (double*)CRTS_pldm_malloc(2 * BS * sizeof(double));
  double* lc = (double*)CRTS_pldm_malloc(2 * BS * sizeof(double));
  double* la = (double*)CRTS_pldm_malloc(BS * sizeof(double));
  crts_rply_t get_rply = 0, put_rply = 0;
  const int blocks = LEN / BS / 64;
  long at = (long)CRTS_tid * BS;
  CRTS_dma_iget(lb, b + at, BS * sizeof(double), &get_rply);
  CRTS_dma_iget(lc, c + at, BS * sizeof(double), &get_rply);
  for (int k = 0; k < blocks; ++k) {
    const int cur = k % 2;
    const long next = ((long)(k + 1) * 64 + CRTS_tid) * BS;
    CRTS_dma_wait_value(&get_rply, 2 * (k + 1));
    if (k + 1 < blocks) {
      CRTS_dma_iget(lb + (1 - cur) * BS, b + next, BS * sizeof(double), &get_rply);
      CRTS_dma_iget(lc + (1 - cur) * BS, c + next, BS * sizeof(double), &get_rply);
    }
    if (k > 0) CRTS_dma_wait_value(&put_rply, k);
    for (int i = 0; i < BS; ++i) la[i] = lb[cur * BS + i] + scalar * lc[cur * BS + i];
    CRTS_dma_iput(a + ((long)k * 64 + CRTS_tid) * BS, la, BS * sizeof(double), &put_rply);
  }
  CRTS_dma_wait_value(&put_rply, blocks);
  CRTS_ssync_array();
  CRTS_pldm_free(la, BS * sizeof(double));
  CRTS_pldm_free(lc, 2 * BS * sizeof(double));
  CRTS_pldm_free(lb, 2 * BS * sizeof(double));
}
