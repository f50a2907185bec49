/* Corpus: SIMD scalar-to-vector idioms of Sunway kernels (splat initialization and assignment, scalar casts,
 * value-converting casts between vector types, int256) must compile unmodified and compute what they say. */
#include <athread.h>
#include <stdio.h>

double vin[64 * 8], vout[64 * 8];
float fout[64 * 8];
long bits_out[64 * 4];

extern void SLAVE_FUN(vector_init)(void*);

int main(void) {
  for (int i = 0; i < 64 * 8; ++i) vin[i] = i * 0.5;
  athread_init();
  athread_spawn(vector_init, 0);
  athread_join();
  int errors = 0;
  for (int c = 0; c < 64; ++c) {
    for (int j = 0; j < 4; ++j) {
      const double x = vin[c * 8 + j];
      errors += vout[c * 8 + j] != 2.0 * x + 1.0 + 3.0;                    /* v = 1.0; (doublev4)3.0; 2*x + v + w */
      errors += vout[c * 8 + 4 + j] != (double)(float)(x * 0.25);          /* (doublev4) of a floatv4 */
      errors += fout[c * 8 + j] != (float)(x + 0.5);                       /* (floatv4) of a doublev4 */
      errors += bits_out[c * 4 + j] != (j == 2 ? 0x7ff0000000000000L : 0); /* int256 = 0, then bits of +inf */
    }
  }
  printf("vector_init %s: %d mismatches\n", errors == 0 ? "ok" : "FAILED", errors);
  athread_halt();
  return errors == 0 ? 0 : 1;
}
