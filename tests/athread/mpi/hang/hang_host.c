/* Rank 0 waits for a message rank 1 never sends; the other ranks go on to MPI_Finalize. The watchdog must end the
 * run with a report naming the ranks and the calls they wait in. */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>

extern SLAVE_FUN(idle)();

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  athread_init();
  athread_spawn(idle, 0);
  athread_join();
  if (rank == 0) {
    int value = 0;
    MPI_Recv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("hang: rank 0 received %d, which nobody sent\n", value);
  }
  athread_halt();
  MPI_Finalize();
  return 0;
}
