/* A kernel that only takes simulated time: the ping-pong starts after it on both ranks. */
#include <slave.h>

void warm_up(void* arg) {
  (void)arg;
  ldmsim_athread_charge(1000);
}
