#include <slave.h>

#define N (64 * 256)
#define TILE 256

extern double a[], b[], c[];

/* defined in multi_slave_dma.c and multi_slave_compute.c */
void dma_read(void* ldm, const void* mem, int bytes);
void dma_write(void* mem, const void* ldm, int bytes);
void tile_axpy(double alpha, const double* x, double* y, int n);

void axpy_main(void) {
  double* x = (double*)ldm_malloc(TILE * sizeof(double));
  double* y = (double*)ldm_malloc(TILE * sizeof(double));
  int off = _MYID * TILE;
  dma_read(x, &a[off], TILE * sizeof(double));
  dma_read(y, &b[off], TILE * sizeof(double));
  tile_axpy(3.0, x, y, TILE);
  dma_write(&c[off], y, TILE * sizeof(double));
  ldm_free(x, TILE * sizeof(double));
  ldm_free(y, TILE * sizeof(double));
}
