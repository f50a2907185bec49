/* An empty kernel: the hang is across ranks, not on the chip. */
#include <slave.h>

void idle(void* arg) {
  (void)arg;
  ldmsim_athread_charge(10);
}
