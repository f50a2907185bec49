#include <slave.h>

#define CORES 64

#define REG_PUTR(var, dst) asm volatile("putr %0,%1\n" ::"r"(var), "r"(dst))
#define REG_PUTC(var, dst) asm volatile("putc %0,%1\n" ::"r"(var), "r"(dst))
#define REG_GETR(var) asm volatile("getr %0\n" : "=r"(var))
#define REG_GETC(var) asm volatile("getc %0\n" : "=r"(var))

#define sync_array() __asm__ __volatile__("ldi $1, 0xff\n synr $1\n ldi $1, 0xf\n sync $1\n" ::: "memory", "$1")

extern double tile[];
extern double row_seen[], col_sum[];
extern unsigned long dma_cycles[];

#define REG_SYNR(mask) asm volatile("synr %0" ::"r"(mask))

static inline unsigned long rpcc(void) {
  unsigned long t;
  asm("rcsr %0,4" : "=r"(t) :);
  return t;
}

static unsigned long read_cycles(void) {
  unsigned long c;
  asm volatile("rcsr %0, 4" : "=r"(c));
  return c;
}

void asm_idioms(void) {
  double buf[32];
  volatile int reply = 0;
  int id = _MYID, row = _ROW, col = _COL, i;
  unsigned long start, stop;
  doublev4 v;

  start = read_cycles();
  athread_get(PE_MODE, &tile[id * 32], buf, sizeof(buf), (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  asm volatile("memb");
  stop = rpcc();
  dma_cycles[id] = stop - start;
  sync_array();
  REG_SYNR(0xff); /* a row sync */

  /* column 0 of each row broadcasts 100 * row along its row */
  if (col == 0) {
    v = 100.0 * row;
    REG_PUTR(v, 8);
    row_seen[id] = 100.0 * row;
  } else {
    REG_GETR(v);
    row_seen[id] = simd_vextf0(v);
  }
  /* row 0 gathers every row's column number down its column */
  double mine = col, sum = 0, got;
  if (row != 0) {
    REG_PUTC(mine, 0);
  } else {
    sum = mine;
    for (i = 1; i < 8; i++) {
      REG_GETC(got);
      sum += got;
    }
  }
  col_sum[id] = row == 0 ? sum : 8.0 * col;
  for (i = 0; i < 32; i++) buf[i] += 1.0;
}
