/* SUMMA GEMM on the 8 x 8 compute cores: C = A * B for N x N doubles, each core owning a 4 x 4 block of A, B
 * and C. */
#define N 32
#define BLOCK 4
