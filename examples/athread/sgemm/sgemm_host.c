/* Blocked SGEMM on one core group with athread BCAST and ROW mode gets; checked against a host reference. */
#include <athread.h>
#include <math.h>
#include <stdio.h>

#include "sgemm.h"

float A[M][K], B[K][N], C[M][N];

extern SLAVE_FUN(sgemm)();

int main(void) {
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) A[i][k] = (float)((i * 5 + k * 3) % 13) * 0.25f;
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) B[k][j] = (float)((k * 7 + j) % 9) * 0.5f - 1.0f;
  athread_init();
  athread_spawn(sgemm, 0);
  athread_join();
  int errors = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float ref = 0.0f;
      for (int k = 0; k < K; ++k) ref += A[i][k] * B[k][j];
      errors += fabsf(C[i][j] - ref) > 1e-4f * (1.0f + fabsf(ref));
    }
  printf("sgemm %s: %d mismatches, %lu simulated cycles\n", errors == 0 ? "ok" : "FAILED", errors,
         athread_host_cycles());
  athread_halt();
  return errors == 0 ? 0 : 1;
}
