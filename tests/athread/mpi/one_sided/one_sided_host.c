/* The simulated time of one-sided communication and of MPI_Alltoallw / Ialltoallw, on 4 ranks: puts, gets,
 * accumulates and the fetching operations completed by MPI_Win_fence, a put completed by MPI_Win_unlock, each
 * against its formula (tests/athread/mpi/CMakeLists.txt). Prints each section's cycles (from athread_host_cycles,
 * which includes MPI time) and checks the data each call moved. */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

extern SLAVE_FUN(busy)();

#define BYTES 4097 /* bytes of each put and get */
#define DOUBLES 512

static int rank, size, bad;
static char line[1024];
static unsigned long mark;
static char out_msg[BYTES], in_msg[BYTES], window_bytes[BYTES];
static double ones[DOUBLES], sums[DOUBLES], fetched[DOUBLES];
static long long counter;

static void start(void) {
  mark = athread_host_cycles();
}

static void stop(const char* name) {
  const unsigned long now = athread_host_cycles();
  char part[64];
  snprintf(part, sizeof part, " %s %lu", name, now - mark);
  strncat(line, part, sizeof line - strlen(line) - 1);
}

static void expect(int ok, const char* what) {
  if (!ok) {
    printf("one_sided rank %d: wrong data after %s\n", rank, what);
    bad = 1;
  }
}

/* Rank `from`'s pattern at byte i. */
static char pattern(int from, int i) {
  return (char)(from * 7 + i);
}

/* Alltoallw blocks: to rank j, 512 (j + 1) bytes, as ints for even j and as chars for odd j. */
static MPI_Datatype type_to(int j) {
  return j % 2 == 0 ? MPI_INT : MPI_CHAR;
}

static int count_to(int j) {
  return j % 2 == 0 ? 128 * (j + 1) : 512 * (j + 1);
}

static void alltoallw(int blocking) {
  static char send[4 * 2048], recv[4 * 2048 + 1];
  int sendcounts[4], sdispls[4], recvcounts[4], rdispls[4];
  MPI_Datatype sendtypes[4], recvtypes[4];
  for (int j = 0; j < 4; ++j) {
    sendcounts[j] = count_to(j);
    sendtypes[j] = type_to(j);
    sdispls[j] = 2048 * j; /* byte displacements */
    recvcounts[j] = count_to(rank);
    recvtypes[j] = type_to(rank);
    rdispls[j] = 2048 * j;
    memset(send + 2048 * j, rank + 1, 2048);
  }
  memset(recv, 0, sizeof recv);
  if (blocking) {
    start();
    MPI_Alltoallw(send, sendcounts, sdispls, sendtypes, recv, recvcounts, rdispls, recvtypes, MPI_COMM_WORLD);
    stop("Alltoallw");
  } else {
    MPI_Request request;
    start();
    MPI_Ialltoallw(send, sendcounts, sdispls, sendtypes, recv, recvcounts, rdispls, recvtypes, MPI_COMM_WORLD,
                   &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    stop("Ialltoallw");
  }
  /* From rank 3: 512 (rank + 1) bytes of 4, then nothing. */
  const int last = 2048 * 3 + 512 * (rank + 1) - 1;
  expect(recv[last] == 4 && recv[last + 1] == 0, blocking ? "MPI_Alltoallw" : "MPI_Ialltoallw");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  athread_init();
  unsigned long warm_up = 1000;
  athread_spawn(busy, &warm_up);
  athread_join();
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int left2 = (rank + size - 2) % size, right2 = (rank + 2) % size;
  for (int i = 0; i < BYTES; ++i) out_msg[i] = pattern(rank, i);
  for (int i = 0; i < DOUBLES; ++i) ones[i] = rank + 1;
  MPI_Win bytes_win, sums_win, counter_win;
  MPI_Win_create(window_bytes, BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bytes_win);
  MPI_Win_create(sums, sizeof sums, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &sums_win);
  MPI_Win_create(&counter, sizeof counter, sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD, &counter_win);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank enters what follows at the same cycle */

  start();
  MPI_Win_fence(0, bytes_win);
  stop("Fence");
  start();
  MPI_Put(out_msg, BYTES, MPI_CHAR, right, 0, BYTES, MPI_CHAR, bytes_win);
  MPI_Win_fence(0, bytes_win);
  stop("Put");
  expect(window_bytes[0] == pattern(left, 0) && window_bytes[BYTES - 1] == pattern(left, BYTES - 1), "MPI_Put");
  start();
  MPI_Get(in_msg, BYTES, MPI_CHAR, right, 0, BYTES, MPI_CHAR, bytes_win);
  MPI_Win_fence(0, bytes_win);
  stop("Get");
  expect(in_msg[0] == pattern(rank, 0) && in_msg[BYTES - 1] == pattern(rank, BYTES - 1), "MPI_Get");
  start();
  MPI_Put(out_msg, 2048, MPI_CHAR, right, 0, 2048, MPI_CHAR, bytes_win);
  MPI_Put(out_msg, 2048, MPI_CHAR, right2, 2048, 2048, MPI_CHAR, bytes_win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, bytes_win);
  stop("Put*2");
  expect(window_bytes[2047] == pattern(left, 2047) && window_bytes[2048] == pattern(left2, 0), "two MPI_Puts");

  MPI_Win_fence(0, sums_win);
  start();
  MPI_Accumulate(ones, DOUBLES, MPI_DOUBLE, right, 0, DOUBLES, MPI_DOUBLE, MPI_SUM, sums_win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, sums_win);
  stop("Accumulate");
  expect(sums[0] == left + 1 && sums[DOUBLES - 1] == left + 1, "MPI_Accumulate");
  MPI_Win_fence(0, sums_win);
  start();
  MPI_Get_accumulate(ones, DOUBLES, MPI_DOUBLE, fetched, DOUBLES, MPI_DOUBLE, right, 0, DOUBLES, MPI_DOUBLE, MPI_SUM,
                     sums_win);
  MPI_Win_fence(0, sums_win);
  stop("Get_accumulate");
  expect(fetched[DOUBLES - 1] == rank + 1 && sums[DOUBLES - 1] == 2 * (left + 1), "MPI_Get_accumulate");
  double one = 1, before = 0;
  start();
  MPI_Fetch_and_op(&one, &before, MPI_DOUBLE, right, 0, MPI_SUM, sums_win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, sums_win);
  stop("Fetch_and_op");
  expect(before == 2 * (rank + 1) && sums[0] == 2 * (left + 1) + 1, "MPI_Fetch_and_op");
  MPI_Win_fence(0, counter_win);
  long long compare = 0, mine = rank + 1, found = -1;
  start();
  MPI_Compare_and_swap(&mine, &compare, &found, MPI_LONG_LONG, right, 0, counter_win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, counter_win);
  stop("Compare_and_swap");
  expect(found == 0 && counter == left + 1, "MPI_Compare_and_swap");

  start();
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, bytes_win);
  MPI_Put(out_msg, BYTES, MPI_CHAR, right, 0, BYTES, MPI_CHAR, bytes_win);
  MPI_Win_unlock(right, bytes_win);
  stop("Lock+Put+Unlock");
  MPI_Barrier(MPI_COMM_WORLD);
  expect(window_bytes[2048] == pattern(left, 2048) && window_bytes[BYTES - 1] == pattern(left, BYTES - 1),
         "MPI_Put in a lock epoch");

  MPI_Request request;
  memset(in_msg, 0, sizeof in_msg);
  MPI_Win_lock_all(0, bytes_win);
  start();
  MPI_Rget(in_msg, BYTES, MPI_CHAR, right, 0, BYTES, MPI_CHAR, bytes_win, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Rget");
  expect(in_msg[0] == pattern(rank, 0) && in_msg[BYTES - 1] == pattern(rank, BYTES - 1), "MPI_Rget");
  start();
  MPI_Rput(out_msg, BYTES, MPI_CHAR, right, 0, BYTES, MPI_CHAR, bytes_win, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Rput");
  start();
  MPI_Win_unlock_all(bytes_win);
  stop("Unlock_all");

  MPI_Barrier(MPI_COMM_WORLD);
  alltoallw(1);
  alltoallw(0);

  MPI_Win_free(&counter_win);
  MPI_Win_free(&sums_win);
  MPI_Win_free(&bytes_win);
  printf("one_sided rank %d:%s\n", rank, line);
  athread_halt();
  MPI_Finalize();
  return bad;
}
