/* SUMMA-style GEMM with register communication (SW26010): at step k the cores of column k broadcast their
 * block of A along their rows (REG_PUTR to 8), the cores of row k broadcast their block of B along their columns
 * (REG_PUTC to 8), and every core accumulates A(r,k) * B(k,c) into its block of C with doublev4 FMAs. The host
 * checks C against a plain triple loop. */
#include <athread.h>
#include <math.h>
#include <stdio.h>

#include "summa.h"

double A[N][N], B[N][N], C[N][N];

extern SLAVE_FUN(summa)();

int main(void) {
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      A[i][j] = (i * 7 + j * 3) % 11 - 5;
      B[i][j] = (i * 5 + j * 2) % 13 - 6;
    }
  }
  athread_init();
  athread_spawn(summa, 0);
  athread_join();
  int errors = 0;
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < N; ++k) want += A[i][k] * B[k][j];
      errors += fabs(C[i][j] - want) > 1e-9;
    }
  }
  printf("summa %s: %d mismatches, %lu simulated cycles\n", errors == 0 ? "ok" : "FAILED", errors,
         athread_host_cycles());
  athread_halt();
  return errors == 0 ? 0 : 1;
}
