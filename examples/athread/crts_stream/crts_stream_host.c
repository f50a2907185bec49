/* STREAM triad on SW26010-Pro with CRTS on the compute cores (run with LDMSIM_ARCH=sw26010pro). */
#include <athread.h>
#include <stdio.h>

#define LEN (64 * 1024 * 2)

double a[LEN], b[LEN], c[LEN];
double scalar = 3.0;

extern SLAVE_FUN(triad)();

int main(void) {
  for (int i = 0; i < LEN; ++i) {
    a[i] = 0.0;
    b[i] = (double)(i % 5);
    c[i] = (double)(i % 3) + 0.5;
  }
  CRTS_athread_init();
  athread_spawn(triad, 0);
  athread_join();
  int errors = 0;
  for (int i = 0; i < LEN; ++i) errors += a[i] != b[i] + scalar * c[i];
  printf("CRTS triad %s: %d mismatches on %d cores, %lu simulated cycles\n", errors == 0 ? "ok" : "FAILED", errors,
         athread_get_max_threads(), athread_host_cycles());
  CRTS_athread_halt();
  return errors == 0 ? 0 : 1;
}
