/* A DMA get that runs past the end of its host mapping traps in MPI programs too, whose mirrors reserve more than the
 * mapping (docs/athread.md "Main memory is host memory"): a readable page followed by an inaccessible one. */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

extern SLAVE_FUN(overrun)();

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long page = sysconf(_SC_PAGESIZE);
  char* pages = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED || mprotect(pages + page, (size_t)page, PROT_NONE) != 0) {
    perror("overrun: mmap");
    return 1;
  }
  athread_init();
  athread_spawn(overrun, pages + page);
  athread_join();
  printf("overrun: the get did not trap\n");
  athread_halt();
  MPI_Finalize();
  return 0;
}
