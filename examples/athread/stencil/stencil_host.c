/* 7-point 3-D Jacobi stencil on one core group with athread (strided DMA, row and column syncs); the control
 * core checks the result bit for bit against the same sweeps on the host. */
#include <athread.h>
#include <stdio.h>

#include "stencil.h"

static double a[NZ][NY][NX], b[NZ][NY][NX], ra[NZ][NY][NX], rb[NZ][NY][NX];

extern SLAVE_FUN(stencil_sweeps)();

static void reference(void) {
  double(*src)[NY][NX] = ra;
  double(*dst)[NY][NX] = rb;
  for (int t = 0; t < STEPS; ++t) {
    for (int z = 1; z < NZ - 1; ++z)
      for (int y = 1; y < NY - 1; ++y)
        for (int x = 1; x < NX - 1; ++x)
          dst[z][y][x] = C0 * src[z][y][x] + C1 * (src[z][y][x - 1] + src[z][y][x + 1] + src[z][y - 1][x] +
                                                   src[z][y + 1][x] + src[z - 1][y][x] + src[z + 1][y][x]);
    double(*tmp)[NY][NX] = src;
    src = dst;
    dst = tmp;
  }
}

int main(void) {
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) a[z][y][x] = b[z][y][x] = ra[z][y][x] = rb[z][y][x] = (z * 7 + y * 3 + x) % 11;
  stencil_arg arg = {&a[0][0][0], &b[0][0][0]};
  athread_init();
  athread_spawn(stencil_sweeps, &arg);
  athread_join();
  reference();
  int errors = 0;
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) errors += a[z][y][x] != ra[z][y][x] || b[z][y][x] != rb[z][y][x];
  printf("stencil %s: %d mismatches, %lu simulated cycles\n", errors == 0 ? "ok" : "FAILED", errors,
         athread_host_cycles());
  athread_halt();
  return errors == 0 ? 0 : 1;
}
