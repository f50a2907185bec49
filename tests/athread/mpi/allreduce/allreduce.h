/* Shared by the allreduce test's host and slave files. */
#define PER_CORE 256
#define CORES 64

typedef struct {
  double* data;    /* CORES * PER_CORE values */
  double* partial; /* one sum per core */
  unsigned long extra_cycles;
} sum_arg;
