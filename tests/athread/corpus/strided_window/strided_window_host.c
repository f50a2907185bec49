/* Corpus: strided gets of a narrow window from wide rows (a 3-D stencil's halo planes skip most of each row), in two
 * rounds with the host changing the rows in between, and a strided put back into the same rows. Each core reads the
 * 8 doubles of its column window from each of 16 rows 2 KiB apart and writes them back doubled next to them; every
 * value the cores saw must be the host's value of that round, and nothing outside the windows may change. */
#include <athread.h>
#include <stdio.h>

#define ROWS 16
#define COLS 1024 /* 64 windows of 8, then as many doubles the cores never touch */
#define WIN 8

double grid[ROWS][COLS];
double doubled[ROWS][COLS];

extern SLAVE_FUN(window)();

int main(void) {
  int round, r, c, bad = 0;
  athread_init();
  for (round = 0; round < 2; round++) {
    for (r = 0; r < ROWS; r++) {
      for (c = 0; c < COLS; c++) {
        grid[r][c] = round * 100000.0 + r * COLS + c;
        doubled[r][c] = -1.0;
      }
    }
    athread_spawn(window, 0);
    athread_join();
    for (r = 0; r < ROWS; r++) {
      for (c = 0; c < COLS; c++) {
        double want = c < 64 * WIN ? 2.0 * grid[r][c] : -1.0;
        if (doubled[r][c] != want) bad++;
      }
    }
  }
  athread_halt();
  printf("strided_window ok: %d mismatches\n", bad);
  return bad != 0;
}
