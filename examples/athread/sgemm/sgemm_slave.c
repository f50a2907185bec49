/* SGEMM kernel: per k-panel, core 0 broadcasts B[kb:kb+KB][:] to every core (BCAST_MODE) and column 0 of
 * each row fetches A[8r:8r+8][kb:kb+KB] for its whole row (ROW_MODE, strided); array syncs fence the panels.
 * Each core accumulates its 8x8 block of C with floatv4 arithmetic and puts it back with a strided put. */
#include <simd.h>
#include <slave.h>

#include "sgemm.h"

__thread_local float panel_b[KB][N] __attribute__((aligned(32)));
__thread_local float panel_a[8][KB] __attribute__((aligned(32)));
__thread_local float acc[8][8] __attribute__((aligned(32)));
__thread_local volatile int bcast_reply, row_reply, put_reply;

void sgemm(void) {
  const int r = _ROW, c = _COL;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  bcast_reply = row_reply = put_reply = 0;
  int panels = 0;
  for (int kb = 0; kb < K; kb += KB, ++panels) {
    athread_syn(ARRAY_SCOPE, 0xffff); /* nobody still reads the previous panels */
    if (_MYID == 0) {
      athread_get(BCAST_MODE, &B[kb][0], panel_b, KB * N * sizeof(float), (void*)&bcast_reply, 0xff, 0, 0);
      while (bcast_reply != panels + 1) {
      }
    }
    if (c == 0) {
      athread_get(ROW_MODE, &A[8 * r][kb], panel_a, 8 * KB * sizeof(float), (void*)&row_reply, 0,
                  (K - KB) * sizeof(float), KB * sizeof(float));
      while (row_reply != panels + 1) {
      }
    }
    athread_syn(ARRAY_SCOPE, 0xffff); /* the panels have arrived everywhere */
    for (int i = 0; i < 8; ++i) {
      floatv4 lo, hi, alo, ahi;
      simd_load(alo, &acc[i][0]);
      simd_load(ahi, &acc[i][4]);
      for (int k = 0; k < KB; ++k) {
        floatv4 av = simd_set_floatv4(panel_a[i][k], panel_a[i][k], panel_a[i][k], panel_a[i][k]);
        simd_loadu(lo, &panel_b[k][8 * c]);
        simd_loadu(hi, &panel_b[k][8 * c + 4]);
        alo = simd_vmads(av, lo, alo);
        ahi = simd_vmads(av, hi, ahi);
      }
      simd_store(alo, &acc[i][0]);
      simd_store(ahi, &acc[i][4]);
    }
  }
  athread_put(PE_MODE, acc, &C[8 * r][8 * c], 8 * 8 * sizeof(float), (void*)&put_reply, (N - 8) * sizeof(float),
              8 * sizeof(float));
  while (put_reply != 1) {
  }
}
