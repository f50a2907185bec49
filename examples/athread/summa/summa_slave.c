#include <simd.h>
#include <slave.h>

#include "summa.h"

extern double A[N][N], B[N][N], C[N][N];

__thread_local double a[BLOCK][BLOCK] __attribute__((aligned(32)));
__thread_local double b[BLOCK][BLOCK] __attribute__((aligned(32)));
__thread_local double c[BLOCK][BLOCK] __attribute__((aligned(32)));
__thread_local volatile int reply;

void summa(void) {
  const int row = _ROW, col = _COL;
  doublev4 acc[BLOCK], arow[BLOCK], brow[BLOCK];
  reply = 0;
  athread_get(PE_MODE, &A[row * BLOCK][col * BLOCK], a, sizeof(a), (void*)&reply, 0, (N - BLOCK) * sizeof(double),
              BLOCK * sizeof(double));
  athread_get(PE_MODE, &B[row * BLOCK][col * BLOCK], b, sizeof(b), (void*)&reply, 0, (N - BLOCK) * sizeof(double),
              BLOCK * sizeof(double));
  while (reply != 2) {
  }
  for (int i = 0; i < BLOCK; ++i) acc[i] = 0;
  for (int k = 0; k < 8; ++k) {
    /* A(row, k) along the row, B(k, col) along the column: one doublev4 (a block row) per transfer. */
    for (int i = 0; i < BLOCK; ++i) {
      if (col == k) {
        simd_load(arow[i], a[i]);
        REG_PUTR(arow[i], 8);
      } else {
        REG_GETR(arow[i]);
      }
      if (row == k) {
        simd_load(brow[i], b[i]);
        REG_PUTC(brow[i], 8);
      } else {
        REG_GETC(brow[i]);
      }
    }
    for (int i = 0; i < BLOCK; ++i) {
      for (int j = 0; j < BLOCK; ++j) acc[i] = simd_vmad((doublev4)arow[i][j], brow[j], acc[i]);
    }
  }
  for (int i = 0; i < BLOCK; ++i) simd_store(acc[i], c[i]);
  athread_put(PE_MODE, c, &C[row * BLOCK][col * BLOCK], sizeof(c), (void*)&reply, (N - BLOCK) * sizeof(double),
              BLOCK * sizeof(double));
  while (reply != 3) {
  }
}
