/* Corpus: SW26010-Pro's multi-core-group host API: athread_init_cgs / athread_spawn_cgs / athread_join_cgs, a
 * __cross global carrying the parameters, _sw_xmalloc'ed shared memory, current_array_id, and on the compute
 * cores CRTS_cgn / CRTS_tid with blocking strided athread_dma_get_stride / athread_dma_put. */
#include <athread.h>
#include <crts.h>
#include <stdio.h>

typedef struct {
  int groups;
  long* tags;  /* one per core of the node */
  long* table; /* 64 rows of 8 longs, read strided */
} param_t;

__cross param_t* para_cross = NULL;

extern void SLAVE_FUN(multi_cg)(void*);

int main(void) {
  param_t para;
  para.groups = 6;
  para.tags = (long*)_sw_xmalloc(sizeof(long) * 6 * 64);
  para.table = (long*)_sw_xmalloc(sizeof(long) * 64 * 8);
  for (int i = 0; i < 64 * 8; ++i) para.table[i] = i;
  para_cross = &para;
  athread_init_cgs();
  athread_spawn_cgs(multi_cg, 0);
  athread_join_cgs();
  int errors = current_array_id() != 0;
  for (int cg = 0; cg < 6; ++cg) {
    for (int id = 0; id < 64; ++id) {
      /* column 0 of row id (8 * id) plus the group and core numbers */
      errors += para.tags[cg * 64 + id] != 8 * id + 1000 * cg + 100000 * id;
    }
  }
  printf("multi_cg %s: %d mismatches on 6 x 64 cores\n", errors == 0 ? "ok" : "FAILED", errors);
  _sw_xfree(para.tags);
  _sw_xfree(para.table);
  athread_halt_cgs();
  return errors == 0 ? 0 : 1;
}
