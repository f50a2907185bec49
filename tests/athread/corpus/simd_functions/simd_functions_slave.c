#include <simd.h>
#include <slave.h>

extern double matrix[16], transposed[64][16], misc[64][8];
extern unsigned long fma_cycles[64];

__thread_local double m[16] __attribute__((aligned(32)));
__thread_local double t[16] __attribute__((aligned(32)));
__thread_local double out[8] __attribute__((aligned(32)));
__thread_local volatile int reply;

void simd_functions(void) {
  const int id = _MYID;
  reply = 0;
  athread_get(PE_MODE, matrix, m, sizeof(m), (void*)&reply, 0, 0, 0);
  while (reply != 1) {
  }
  /* rows in0..in3 -> columns: shff(b, a, 0x44) = [a0 a1 b0 b1], 0xEE = [a2 a3 b2 b3]. */
  doublev4 in0, in1, in2, in3;
  simd_load(in0, &m[0]);
  simd_load(in1, &m[4]);
  simd_load(in2, &m[8]);
  simd_load(in3, &m[12]);
  doublev4 o0 = simd_vshff(in1, in0, 0x44), o1 = simd_vshff(in1, in0, 0xEE);
  doublev4 o2 = simd_vshff(in3, in2, 0x44), o3 = simd_vshff(in3, in2, 0xEE);
  doublev4 t0 = simd_vshff(o2, o0, 0x88), t1 = simd_vshff(o2, o0, 0xDD);
  doublev4 t2 = simd_vshff(o3, o1, 0x88), t3 = simd_vshff(o3, o1, 0xDD);
  simd_store(t0, &t[0]);
  simd_store(t1, &t[4]);
  simd_store(t2, &t[8]);
  simd_store(t3, &t[12]);

  doublev4 five = simd_vshff(in1, in1, 0x55); /* lane 1 of in1 (= 5) everywhere */
  simd_store(five, &out[0]);
  doublev4 lt = simd_vfcmplt(in0, in1);                /* 2.0 in every lane: 0..3 < 4..7 */
  doublev4 picked = simd_vseleq(lt - 2.0, in1, in0);   /* lt - 2 == 0: take in1 */
  out[4] = simd_vextf3(picked);                        /* 7 */
  doublev4 inserted = simd_vinsf1((doublev4)1.5, in0); /* [0 1.5 2 3] */
  out[5] = simd_vextf1(inserted);
  doublev4 roots = simd_vsqrtd(in2); /* sqrt(9) in lane 1 */
  out[6] = simd_vextf1(roots);
  doublev4 half;
  double h = 0.5;
  simd_loade(half, &h);
  out[7] = simd_reduc_plusd(half) / 4;

  doublev4 br = {1, 2, 3, 4}; /* brace initialisation fills the lanes in order */
  intv8 neg = -16;
  intv8 shifted = simd_vsrlw(neg, 28);                              /* logical: 0xfffffff0 >> 28 = 15 */
  doublev4 mixed = (doublev4)_MYID + simd_vshff(br, br, 0xFF) * br; /* an athread call inside an FMA */
  out[7] += (simd_vextf3(br) == 4 && shifted[5] == 15 && simd_vextf0(mixed) == _MYID + 4) ? 0 : 100;
  doublev4 acc = 0, a = 0.5, b = 2.0;
  unsigned long start = rtc();
  for (int i = 0; i < 100; ++i) acc = a * b + acc; /* contracted to one vmad, as the Sunway compilers do */
  fma_cycles[id] = rtc() - start;
  if (simd_vextf0(acc) != 100.0) fma_cycles[id] = 0;

  athread_put(PE_MODE, t, transposed[id], sizeof(t), (void*)&reply, 0, 0);
  athread_put(PE_MODE, out, misc[id], sizeof(out), (void*)&reply, 0, 0);
  while (reply != 3) {
  }
}
