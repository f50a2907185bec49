#include <slave.h>

struct job {
  int n;
  double* in;
  double* out;
};

static void twice_plus_one(double* restrict dst, const double* restrict src, int n) {
  for (int i = 0; i < n; ++i) dst[i] = 2.0 * src[i] + 1.0;
}

void c_isms(void* arg) {
  struct job* job = arg;
  const int n = job->n;
  double* new = ldm_malloc(n * sizeof(double));
  double old[n];
  int class = 0;
  _Bool done = 0;
  volatile int reply = 0;
  athread_get(0, job->in + _MYID * n, old, n * sizeof(double), (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  twice_plus_one(new, old, n);
  athread_put(PE_MODE, new, job->out + _MYID * n, n * sizeof(double), (void*)&reply, 0, 0);
  while (reply != 2) {
  }
  done = 1;
  class += done;
  ldm_free(new, n * sizeof(double));
}
