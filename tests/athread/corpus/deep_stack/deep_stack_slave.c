#include <slave.h>

#define PANEL (24 * 1024)

extern double src[];
extern double sums[];
extern int recurse;

static double descend(volatile double* prev, int depth) {
  volatile double frame[512];
  frame[0] = prev[0] + depth;
  if (recurse || depth < 4) return descend(frame, depth + 1) + frame[0];
  return frame[0];
}

void panel_sum(void) {
  double panel[PANEL];
  volatile int reply = 0;
  double s = 0;
  int i;
  athread_get(PE_MODE, src, panel, sizeof(panel), (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  for (i = 0; i < PANEL; i++) s += panel[i];
  if (recurse) s += descend(panel, 0);
  sums[_MYID] = s + _MYID;
}
