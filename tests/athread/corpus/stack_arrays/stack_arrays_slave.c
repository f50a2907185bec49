#include <slave.h>

extern double a[], b[];
extern int overflow;

void stack_arrays(void* arg) {
  (void)arg;
  double x[1024], y[1024], z[1024]; /* 3 x 8 KiB on the slave stack */
  const int heap_bytes = overflow ? 48 * 1024 : 16 * 1024;
  volatile int reply = 0;
  const long base = (long)_MYID * 1024;
  if (overflow == 2) { /* the stack arrays are in use first: the allocation is what collides */
    /* All three: which lies deepest is the compiler's choice (a debug build orders them differently). */
    athread_get(PE_MODE, &a[base], x, sizeof(x), (void*)&reply, 0, 0, 0);
    athread_get(PE_MODE, &a[base], y, sizeof(y), (void*)&reply, 0, 0, 0);
    athread_get(PE_MODE, &a[base], z, sizeof(z), (void*)&reply, 0, 0, 0);
    while (reply != 3) {
    }
    reply = 0;
  }
  double* scratch = ldm_malloc(heap_bytes);
  athread_get(PE_MODE, &a[base], x, sizeof(x), (void*)&reply, 0, 0, 0);
  athread_get(PE_MODE, &a[base], y, sizeof(y), (void*)&reply, 0, 0, 0);
  athread_get(PE_MODE, &a[base], scratch, 1024 * sizeof(double), (void*)&reply, 0, 0, 0);
  while (reply != 3) {
  }
  for (int i = 0; i < 1024; ++i) z[i] = x[i] + y[i] + scratch[i];
  athread_put(PE_MODE, z, &b[base], sizeof(z), (void*)&reply, 0, 0);
  while (reply != 4) {
  }
  ldm_free(scratch, heap_bytes);
}
