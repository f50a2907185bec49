/* Blocked SGEMM for athread: C[M][N] = A[M][K] * B[K][N]; core (r, c) owns the 8x8 block of C at (8r, 8c). */
#ifndef SGEMM_H
#define SGEMM_H
#define M 64
#define N 64
#define K 96
#define KB 16
extern float A[M][K], B[K][N], C[M][N];
#endif
