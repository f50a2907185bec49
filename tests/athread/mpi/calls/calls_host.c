/* The simulated time of the MPI calls beyond send / receive and the basic collectives, on 4 ranks that enter each
 * call at the same cycle: v-collectives, scans, reduce-scatter, non-blocking collectives (alone and overlapping a
 * kernel), Waitsome / Testsome / Testany, persistent requests and matched probes. Prints each call's cycles (from
 * athread_host_cycles, which includes MPI time) and checks the data each call moved. */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern SLAVE_FUN(busy)();

#define N 1024    /* doubles */
#define RING 4097 /* bytes of each ring message */

static int rank, size, bad;
static char line[2048];
static unsigned long mark;

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
    printf("calls rank %d: wrong data after %s\n", rank, what);
    bad = 1;
  }
}

/* Each rank sends RING bytes to the next and receives from the previous one. */
static char out_msg[RING], in_msg[RING];

static int ring_ok(void) {
  const int left = (rank + size - 1) % size;
  for (int i = 0; i < RING; ++i) {
    if (in_msg[i] != (char)(left * 7 + i)) return 0;
  }
  return 1;
}

static void ring_waitsome(void) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Request requests[2];
  MPI_Irecv(in_msg, RING, MPI_CHAR, left, 1, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(out_msg, RING, MPI_CHAR, right, 1, MPI_COMM_WORLD, &requests[1]);
  int done = 0, outcount = 0, indices[2];
  while (done < 2) {
    MPI_Waitsome(2, requests, &outcount, indices, MPI_STATUSES_IGNORE);
    done += outcount;
  }
  expect(ring_ok(), "MPI_Waitsome");
}

static void ring_testsome_testany(void) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Request requests[2];
  MPI_Irecv(in_msg, RING, MPI_CHAR, left, 2, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(out_msg, RING, MPI_CHAR, right, 2, MPI_COMM_WORLD, &requests[1]);
  int flag = 0, index = 0;
  while (!flag) MPI_Testany(1, &requests[0], &index, &flag, MPI_STATUS_IGNORE);
  int outcount = 0, indices[1];
  do {
    MPI_Testsome(1, &requests[1], &outcount, indices, MPI_STATUSES_IGNORE);
  } while (outcount == 0);
  expect(ring_ok(), "MPI_Testany");
}

static void ring_persistent(void) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Request requests[2];
  MPI_Recv_init(in_msg, RING, MPI_CHAR, left, 3, MPI_COMM_WORLD, &requests[0]);
  MPI_Send_init(out_msg, RING, MPI_CHAR, right, 3, MPI_COMM_WORLD, &requests[1]);
  for (int round = 0; round < 2; ++round) {
    memset(in_msg, 0, sizeof in_msg);
    MPI_Startall(2, requests);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    expect(ring_ok(), "MPI_Startall");
  }
  MPI_Request_free(&requests[0]);
  MPI_Request_free(&requests[1]);
}

static void ring_mprobe(void) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Request request;
  MPI_Isend(out_msg, RING, MPI_CHAR, right, 4, MPI_COMM_WORLD, &request);
  MPI_Message message;
  MPI_Status status;
  MPI_Mprobe(left, 4, MPI_COMM_WORLD, &message, &status);
  MPI_Mrecv(in_msg, RING, MPI_CHAR, &message, MPI_STATUS_IGNORE);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  expect(ring_ok(), "MPI_Mrecv");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  athread_init();
  for (int i = 0; i < RING; ++i) out_msg[i] = (char)(rank * 7 + i);
  double* a = malloc(4 * N * sizeof(double));
  double* b = malloc(4 * N * sizeof(double));
  int counts[4], displs[4];
  int total = 0;
  for (int i = 0; i < 4; ++i) {
    counts[i] = 256 * (i + 1); /* rank i's block: 2048 (i + 1) bytes */
    displs[i] = total;
    total += counts[i];
  }
  for (int i = 0; i < 4 * N; ++i) a[i] = rank + 1;
  MPI_Barrier(MPI_COMM_WORLD); /* every rank enters what follows at the same cycle */

  start();
  MPI_Barrier(MPI_COMM_WORLD);
  stop("Barrier");
  start();
  MPI_Scan(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  stop("Scan");
  expect(b[0] == (rank + 1) * (rank + 2) / 2, "MPI_Scan");
  start();
  MPI_Exscan(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  stop("Exscan");
  expect(rank == 0 || b[N - 1] == rank * (rank + 1) / 2, "MPI_Exscan");
  start();
  MPI_Gatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  stop("Gatherv");
  expect(rank != 0 || (b[0] == 1 && b[displs[3]] == 4), "MPI_Gatherv");
  start();
  MPI_Scatterv(a, counts, displs, MPI_DOUBLE, b, counts[rank], MPI_DOUBLE, 0, MPI_COMM_WORLD);
  stop("Scatterv");
  expect(b[counts[rank] - 1] == 1, "MPI_Scatterv");
  start();
  MPI_Allgatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  stop("Allgatherv");
  expect(b[displs[2]] == 3, "MPI_Allgatherv");
  int sendcounts[4], sdispls[4], recvcounts[4], rdispls[4];
  for (int j = 0; j < 4; ++j) {
    sendcounts[j] = 64 * (j + 1); /* to rank j: 512 (j + 1) bytes */
    sdispls[j] = 64 * j * (j + 1) / 2;
    recvcounts[j] = 64 * (rank + 1);
    rdispls[j] = 64 * (rank + 1) * j;
  }
  start();
  MPI_Alltoallv(a, sendcounts, sdispls, MPI_DOUBLE, b, recvcounts, rdispls, MPI_DOUBLE, MPI_COMM_WORLD);
  stop("Alltoallv");
  expect(b[rdispls[3]] == 4, "MPI_Alltoallv");
  start();
  MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  stop("Reduce_scatter");
  expect(b[counts[rank] - 1] == 10, "MPI_Reduce_scatter");
  start();
  MPI_Reduce_scatter_block(a, b, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  stop("Reduce_scatter_block");
  expect(b[255] == 10, "MPI_Reduce_scatter_block");

  MPI_Request request;
  start();
  MPI_Iscan(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Iscan");
  expect(b[0] == (rank + 1) * (rank + 2) / 2, "MPI_Iscan");
  start();
  MPI_Igatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Igatherv");
  expect(rank != 0 || (b[0] == 1 && b[displs[3]] == 4), "MPI_Igatherv");
  start();
  MPI_Iallgatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Iallgatherv");
  expect(b[displs[2]] == 3, "MPI_Iallgatherv");
  start();
  MPI_Ialltoallv(a, sendcounts, sdispls, MPI_DOUBLE, b, recvcounts, rdispls, MPI_DOUBLE, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Ialltoallv");
  expect(b[rdispls[3]] == 4, "MPI_Ialltoallv");
  start();
  MPI_Ireduce_scatter_block(a, b, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Ireduce_scatter_block");
  expect(b[255] == 10, "MPI_Ireduce_scatter_block");
  start();
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Ibarrier");
  start();
  MPI_Iallreduce(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  stop("Iallreduce");
  expect(b[N - 1] == 10, "MPI_Iallreduce");
  /* A kernel longer than the broadcast hides it: the same cycles as the kernel alone. */
  unsigned long kernel = 20000;
  mark = athread_host_cycles();
  athread_spawn(busy, &kernel);
  athread_join();
  const unsigned long alone = athread_host_cycles() - mark;
  mark = athread_host_cycles();
  MPI_Ibcast(a, N, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
  athread_spawn(busy, &kernel);
  athread_join();
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  const unsigned long overlapped = athread_host_cycles() - mark;
  char part[96];
  if (overlapped == alone && alone >= 20000) {
    snprintf(part, sizeof part, " Ibcast+kernel hidden");
  } else {
    snprintf(part, sizeof part, " Ibcast+kernel %lu (kernel alone %lu)", overlapped, alone);
  }
  strncat(line, part, sizeof line - strlen(line) - 1);
  expect(a[N - 1] == 1, "MPI_Ibcast");

  start();
  ring_waitsome();
  stop("Waitsome");
  start();
  ring_testsome_testany();
  stop("Testany");
  start();
  ring_persistent();
  stop("Startall*2");
  start();
  ring_mprobe();
  stop("Mrecv");

  printf("calls rank %d:%s\n", rank, line);
  fflush(stdout);
  athread_halt();
  MPI_Finalize();
  return bad;
}
