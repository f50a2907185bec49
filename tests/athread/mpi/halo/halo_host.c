/* A 2-D Jacobi stencil over MPI ranks on a Cartesian grid (MPI_Dims_create): each step exchanges halos (rows with
 * MPI_Sendrecv, columns with MPI_Irecv / MPI_Isend / MPI_Waitall) and runs one sweep on the compute cores. Rank 0
 * gathers the result and compares it, exactly, with a sequential sweep of the whole grid. Prints the simulated
 * cycles per step and the host seconds of the run (weak scaling: LOCAL x LOCAL points per rank at any rank count).
 * Usage: halo [steps] */
#include <athread.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "halo.h"

extern SLAVE_FUN(jacobi_sweep)();

/* Fixed values on the global boundary; 0 inside at the start. */
static double boundary(int gy, int gx) {
  return (double)(gx + 2 * gy);
}

static double host_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The whole grid (GY + 2) x (GX + 2), swept `steps` times on the host in the kernel's order of operations. */
static double* reference(int gy, int gx, int steps) {
  const int w = gx + 2;
  double* a = calloc((size_t)(gy + 2) * (size_t)w, sizeof(double));
  double* b = calloc((size_t)(gy + 2) * (size_t)w, sizeof(double));
  for (int y = 0; y < gy + 2; ++y)
    for (int x = 0; x < w; ++x)
      if (y == 0 || y == gy + 1 || x == 0 || x == gx + 1) a[y * w + x] = b[y * w + x] = boundary(y, x);
  for (int t = 0; t < steps; ++t) {
    for (int y = 1; y <= gy; ++y)
      for (int x = 1; x <= gx; ++x)
        b[y * w + x] = 0.25 * (a[(y - 1) * w + x] + a[(y + 1) * w + x] + a[y * w + x - 1] + a[y * w + x + 1]);
    double* tmp = a;
    a = b;
    b = tmp;
  }
  free(b);
  return a;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double start = host_seconds();
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, coords);
  int north, south, west, east;
  MPI_Cart_shift(cart, 0, 1, &north, &south);
  MPI_Cart_shift(cart, 1, 1, &west, &east);
  const int gy = dims[0] * LOCAL, gx = dims[1] * LOCAL;
  const int y0 = coords[0] * LOCAL, x0 = coords[1] * LOCAL; /* global index of local (1, 1), minus 1 */

  double* a = calloc(W * W, sizeof(double));
  double* b = calloc(W * W, sizeof(double));
  for (int i = 0; i < W; ++i)
    for (int j = 0; j < W; ++j) {
      const int y = y0 + i, x = x0 + j;
      if (y == 0 || y == gy + 1 || x == 0 || x == gx + 1) a[i * W + j] = b[i * W + j] = boundary(y, x);
    }
  double send_w[LOCAL], send_e[LOCAL], recv_w[LOCAL], recv_e[LOCAL];
  athread_init();
  const unsigned long c0 = athread_host_cycles();
  for (int t = 0; t < steps; ++t) {
    MPI_Sendrecv(a + 1 * W + 1, LOCAL, MPI_DOUBLE, north, 1, a + (LOCAL + 1) * W + 1, LOCAL, MPI_DOUBLE, south, 1, cart,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(a + LOCAL * W + 1, LOCAL, MPI_DOUBLE, south, 2, a + 1, LOCAL, MPI_DOUBLE, north, 2, cart,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < LOCAL; ++i) {
      send_w[i] = a[(i + 1) * W + 1];
      send_e[i] = a[(i + 1) * W + LOCAL];
    }
    MPI_Request requests[4];
    MPI_Irecv(recv_w, LOCAL, MPI_DOUBLE, west, 3, cart, &requests[0]);
    MPI_Irecv(recv_e, LOCAL, MPI_DOUBLE, east, 4, cart, &requests[1]);
    MPI_Isend(send_e, LOCAL, MPI_DOUBLE, east, 3, cart, &requests[2]);
    MPI_Isend(send_w, LOCAL, MPI_DOUBLE, west, 4, cart, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    for (int i = 0; i < LOCAL; ++i) {
      if (west != MPI_PROC_NULL) a[(i + 1) * W] = recv_w[i];
      if (east != MPI_PROC_NULL) a[(i + 1) * W + LOCAL + 1] = recv_e[i];
    }
    halo_arg arg = {a, b};
    athread_spawn(jacobi_sweep, &arg);
    athread_join();
    double* tmp = a;
    a = b;
    b = tmp;
  }
  const unsigned long c1 = athread_host_cycles();

  /* Rank 0 gathers every block (packed interior) and checks it against the sequential sweep. */
  double* block = malloc(LOCAL * LOCAL * sizeof(double));
  for (int i = 0; i < LOCAL; ++i) memcpy(block + i * LOCAL, a + (i + 1) * W + 1, LOCAL * sizeof(double));
  double* all = rank == 0 ? malloc((size_t)size * LOCAL * LOCAL * sizeof(double)) : NULL;
  MPI_Gather(block, LOCAL * LOCAL, MPI_DOUBLE, all, LOCAL * LOCAL, MPI_DOUBLE, 0, cart);
  int status = 0;
  if (rank == 0) {
    double* ref = reference(gy, gx, steps);
    long mismatches = 0;
    for (int r = 0; r < size; ++r) {
      int c[2];
      MPI_Cart_coords(cart, r, 2, c);
      for (int i = 0; i < LOCAL; ++i)
        for (int j = 0; j < LOCAL; ++j) {
          const int y = c[0] * LOCAL + i + 1, x = c[1] * LOCAL + j + 1;
          mismatches += all[(size_t)r * LOCAL * LOCAL + i * LOCAL + j] != ref[y * (gx + 2) + x];
        }
    }
    printf(
        "halo %s: %ld mismatches on a %d x %d grid, %d ranks (%d x %d), %d steps, %.1f simulated cycles per step, "
        "%.3f host seconds\n",
        mismatches == 0 ? "ok" : "FAILED", mismatches, gy, gx, size, dims[0], dims[1], steps,
        steps > 0 ? (double)(c1 - c0) / steps : 0.0, host_seconds() - start);
    status = mismatches == 0 ? 0 : 1;
    free(ref);
  }
  fflush(stdout);
  athread_halt();
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return status;
}
