/* Shared by the halo stencil's host and slave files: each rank owns LOCAL x LOCAL interior points of the global
 * grid and keeps them with a one-point halo in a W x W array. */
#define LOCAL 64
#define W (LOCAL + 2)
#define CORES 64

typedef struct {
  const double* src;
  double* dst;
} halo_arg;
