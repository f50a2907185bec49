/* A kernel that only takes simulated time: each rank runs it once before its one-sided calls. */
#include <slave.h>

void busy(void* arg) {
  ldmsim_athread_charge(*(unsigned long*)arg);
}
