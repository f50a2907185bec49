/* Every rank sums its share of 0, 1, 2, ... on its compute cores, then MPI_Allreduce adds the ranks' sums. Checks
 * the sum against the closed form, and that every rank leaves the allreduce at the same simulated cycle (the latest
 * entry plus the ring's time) although they enter it at different cycles. */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "allreduce.h"

extern SLAVE_FUN(partial_sums)();

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long n = CORES * PER_CORE;
  double* data = malloc(n * sizeof(double));
  double* partial = malloc(CORES * sizeof(double));
  for (long i = 0; i < n; ++i) data[i] = (double)(rank * n + i);
  athread_init();
  sum_arg arg = {data, partial, 1000ul * (unsigned long)rank};
  athread_spawn(partial_sums, &arg);
  athread_join();
  double local = 0;
  for (int c = 0; c < CORES; ++c) local += partial[c];
  const unsigned long entry = athread_host_cycles();
  double global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const unsigned long leave = athread_host_cycles();
  unsigned long* leaves = malloc((size_t)size * sizeof(unsigned long));
  MPI_Gather(&leave, 1, MPI_UNSIGNED_LONG, leaves, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
  const double total = (double)(size * n);
  const double expected = total * (total - 1) / 2;
  printf("allreduce rank %d: entered at cycle %lu, left at cycle %lu, sum %.1f (expected %.1f)\n", rank, entry, leave,
         global, expected);
  int ok = global == expected;
  if (rank == 0) {
    int same = 1;
    for (int r = 1; r < size; ++r) same = same && leaves[r] == leaves[0];
    printf("allreduce %s: sum %.1f on %d ranks, %s\n", ok && same ? "ok" : "FAILED", global, size,
           same ? "every rank left at the same cycle" : "ranks left at different cycles");
    ok = ok && same;
  }
  fflush(stdout);
  athread_halt();
  MPI_Finalize();
  return ok ? 0 : 1;
}
