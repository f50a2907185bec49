/* The vector_scale program on every MPI rank: each rank scales its vector on its own simulated chip, and rank 0
 * adds up the ranks' mismatches. */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>

double x[64 * 32];

extern SLAVE_FUN(vector_scale)();

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 64 * 32; ++i) x[i] = i + rank;
  athread_init();
  athread_spawn(vector_scale, 0);
  athread_join();
  athread_halt();
  int errors = 0, total = 0;
  for (int i = 0; i < 64 * 32; ++i) errors += x[i] != 3.0 * (i + rank);
  MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("vector_scale_mpi %s: %d ranks, %d mismatches\n", total == 0 ? "ok" : "FAILED", size, total);
  MPI_Finalize();
  return total != 0;
}
