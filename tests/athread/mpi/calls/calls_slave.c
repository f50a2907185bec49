/* A kernel that only takes simulated time: what a non-blocking collective overlaps. */
#include <slave.h>

void busy(void* arg) {
  ldmsim_athread_charge(*(unsigned long*)arg);
}
