#include <slave.h>

void tile_axpy(double alpha, const double* x, double* y, int n) {
  int i;
  for (i = 0; i < n; i++) y[i] = alpha * x[i] + y[i];
}
