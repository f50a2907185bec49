#include <slave.h>

#define ROWS 16
#define COLS 1024
#define WIN 8

extern double grid[ROWS][COLS];
extern double doubled[ROWS][COLS];

void window(void) {
  double buf[ROWS * WIN];
  volatile int reply = 0;
  int i;
  const int gap = (COLS - WIN) * (int)sizeof(double); /* 8,128 bytes skipped after every block */
  athread_get(PE_MODE, &grid[0][_MYID * WIN], buf, sizeof buf, (void*)&reply, 0, gap, WIN * sizeof(double));
  while (reply != 1) {
  }
  for (i = 0; i < ROWS * WIN; i++) buf[i] *= 2.0;
  athread_put(PE_MODE, buf, &doubled[0][_MYID * WIN], sizeof buf, (void*)&reply, gap, WIN * sizeof(double));
  while (reply != 2) {
  }
}
