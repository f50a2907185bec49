/* Corpus: a get into a small stack array with a length in elements mistaken for bytes the other way round (8 x too
 * long): the trap must say the transfer runs past the array, not that the stack ran into the heap. */
#include <athread.h>
#include <stdio.h>

#define ROW 16

double grid[64 * ROW * 8];
int row_bytes = ROW * 8 * (int)sizeof(double); /* the bug: 8 rows' worth for a one-row buffer */

extern SLAVE_FUN(first_row)();

int main(void) {
  athread_init();
  athread_spawn(first_row, 0);
  athread_join();
  athread_halt();
  printf("stack_past_end: no trap\n");
  return 0;
}
