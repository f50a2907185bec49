#include <slave.h>

double buf[4];

void vload(void) {
  double* p = buf;
  asm volatile("vldd $f1, 0(%0)" ::"r"(p));
}
