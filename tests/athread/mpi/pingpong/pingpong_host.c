/* Two ranks bounce a 4097-byte message ROUND_TRIPS times after a short athread kernel on each; each prints the
 * simulated cycles and MPI_Wtime seconds the ping-pong took, which the test compares with the LogGP formula. */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUND_TRIPS 10
#define BYTES 4097

extern SLAVE_FUN(warm_up)();

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    fprintf(stderr, "pingpong: run on 2 ranks, not %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  athread_init();
  athread_spawn(warm_up, 0);
  athread_join();
  const unsigned long t0 = athread_host_cycles();
  const double w0 = MPI_Wtime();
  char* buf = malloc(BYTES);
  memset(buf, 0, BYTES);
  int wrong = 0;
  for (int i = 0; i < ROUND_TRIPS; ++i) {
    if (rank == 0) {
      buf[BYTES - 1] = (char)i;
      MPI_Send(buf, BYTES, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, BYTES, MPI_CHAR, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      wrong += buf[BYTES - 1] != (char)(i + 1);
    } else {
      MPI_Recv(buf, BYTES, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      wrong += buf[BYTES - 1] != (char)i;
      buf[BYTES - 1] = (char)(i + 1);
      MPI_Send(buf, BYTES, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
    }
  }
  const unsigned long t1 = athread_host_cycles();
  const double w1 = MPI_Wtime();
  printf("pingpong rank %d: started at cycle %lu, %lu cycles in the ping-pong, MPI_Wtime %.9f s, %d wrong bytes\n",
         rank, t0, t1 - t0, w1 - w0, wrong);
  fflush(stdout);
  free(buf);
  athread_halt();
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
