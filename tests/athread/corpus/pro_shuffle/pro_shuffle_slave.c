#include <simd.h>
#include <slave.h>

extern float fin[64], fout[64][64];
extern double din[64], dout[64][64];
extern int wout[64][16];
extern int split_mode;

/* 16 five-bit word indices into a:b, packed little-endian: stage 1 zips lanes 0-3 / 4-7 of a and b, stage 2
 * zips lane pairs, stage 3 takes halves. */
static intv16 zip_low = {0x8628C020, 0x6AD0A49C, 0xBD8E, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static intv16 zip_high = {0x96ACE128, 0xEEF1ACDE, 0xFF9E, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static intv16 pairs_low = {0xA3018820, 0x4398A49C, 0xBDAB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static intv16 pairs_high = {0xB385A928, 0xC7B9ACDE, 0xFFBB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static intv16 halves_low = {0x8A418820, 0x49CA3039, 0xBDAB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static intv16 halves_high = {0x9AC5A928, 0xCDEB387B, 0xFFBB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

#define TRANSPOSE_8X8(SHF, T, a)                                                \
  do {                                                                          \
    T b[8], c[8];                                                               \
    for (int i = 0; i < 4; ++i) {                                               \
      b[2 * i] = SHF(a[2 * i], a[2 * i + 1], zip_low);                          \
      b[2 * i + 1] = SHF(a[2 * i], a[2 * i + 1], zip_high);                     \
    }                                                                           \
    for (int i = 0; i < 2; ++i)                                                 \
      for (int j = 0; j < 2; ++j) {                                             \
        c[4 * i + 2 * j] = SHF(b[4 * i + j], b[4 * i + j + 2], pairs_low);      \
        c[4 * i + 2 * j + 1] = SHF(b[4 * i + j], b[4 * i + j + 2], pairs_high); \
      }                                                                         \
    for (int i = 0; i < 4; ++i) {                                               \
      a[2 * i] = SHF(c[i], c[i + 4], halves_low);                               \
      a[2 * i + 1] = SHF(c[i], c[i + 4], halves_high);                          \
    }                                                                           \
  } while (0)

void pro_shuffle(void* unused) {
  (void)unused;
  float fl[64] __attribute__((aligned(64)));
  double dl[64] __attribute__((aligned(64)));
  athread_dma_get(fl, fin, sizeof(fl));
  athread_dma_get(dl, din, sizeof(dl));
  floatv8 fr[8];
  doublev8 dr[8];
  for (int r = 0; r < 8; ++r) {
    simd_load(fr[r], &fl[8 * r]);
    simd_load(dr[r], &dl[8 * r]);
  }
  TRANSPOSE_8X8(simd_vshfs, floatv8, fr);
  TRANSPOSE_8X8(simd_vshfd, doublev8, dr);
  for (int r = 0; r < 8; ++r) {
    simd_store(fr[r], &fl[8 * r]);
    simd_store(dr[r], &dl[8 * r]);
  }
  athread_dma_put(fout[_MYID], fl, sizeof(fl));
  athread_dma_put(dout[_MYID], dl, sizeof(dl));

  /* Word reversal of b: field i selects word 31 - i. */
  intv16 reverse = 0;
  for (int i = 0; i < 16; ++i) {
    const int bit = 5 * i, word = bit / 32, shift = bit % 32;
    const unsigned field = 31 - i;
    reverse[word] |= (int)(field << shift);
    if (shift > 27) reverse[word + 1] |= (int)(field >> (32 - shift));
  }
  intv16 ids = 0, zero = 0;
  for (int w = 0; w < 16; ++w) ids[w] = 100 * _MYID + w;
  intv16 reversed = simd_vshfw(zero, ids, reverse);
  int words[16] __attribute__((aligned(64)));
  simd_store(reversed, words);
  athread_dma_put(wout[_MYID], words, sizeof(words));

  if (split_mode && _MYID == 3) {
    intv16 odd = 0; /* field 0 = 0, field 1 = 0: lane 0 would take word 0 twice */
    fr[0] = simd_vshfs(fr[0], fr[1], odd);
  }
}
