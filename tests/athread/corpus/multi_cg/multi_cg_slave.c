#include <crts.h>
#include <slave.h>

typedef struct {
  int groups;
  long* tags;
  long* table;
} param_t;

extern param_t* para_cross;

void multi_cg(void* unused) {
  (void)unused;
  param_t p;
  CRTS_dma_get(&p, para_cross, sizeof(p));
  const int cg = CRTS_cgn, id = CRTS_tid;
  long column0[64];
  athread_dma_get_stride(column0, p.table, 64 * sizeof(long), sizeof(long), 7 * sizeof(long));
  long tag = column0[id] + 1000 * cg + 100000 * id;
  athread_dma_put(&p.tags[cg * 64 + id], &tag, sizeof(tag));
}
