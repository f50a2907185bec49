/* Corpus: slave stacks as large as the local store allows. On sw26010pro (256 KiB of ldm) the kernel keeps a
 * 192 KiB panel on its stack and fills it by DMA, which runs on hardware; `deep_stack recurse` recurses without
 * end (a missing base case), which must stop with a stack-overflow trap naming the kernel and the core. */
#include <athread.h>
#include <stdio.h>
#include <string.h>

#define PANEL (24 * 1024)

double src[PANEL];
double sums[64];
int recurse;

extern SLAVE_FUN(panel_sum)();

int main(int argc, char** argv) {
  int i, bad = 0;
  recurse = argc > 1 && strcmp(argv[1], "recurse") == 0;
  for (i = 0; i < PANEL; i++) src[i] = i % 7;
  athread_init();
  athread_spawn(panel_sum, 0);
  athread_join();
  athread_halt();
  double want = 0;
  for (i = 0; i < PANEL; i++) want += src[i];
  for (i = 0; i < 64; i++) bad += sums[i] != want + i;
  printf("deep_stack ok: %d mismatches\n", bad);
  return bad != 0;
}
