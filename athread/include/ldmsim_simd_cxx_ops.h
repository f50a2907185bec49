/* simd.h for slave files compiled as C++: the Sunway vector types as ldmsim_simd::Vec classes and the simd_*
 * operations on them, each charged as the vector instruction(s) it stands for. Included by simd.h. Semantics
 * follow the SDK's simd.h as kernels use it (docs/athread.md "SIMD"). */
#ifndef LDMSIM_SIMD_CXX_OPS_H
#define LDMSIM_SIMD_CXX_OPS_H

#include <stdio.h>

#include "ldmsim_simd_cxx.h"

extern "C++" {

/* SW26010 (256-bit registers; floatv4 is 4 floats, 16 bytes in memory). */
typedef ldmsim_simd::Vec<double, 4> doublev4;
typedef ldmsim_simd::Vec<float, 4> floatv4;
typedef ldmsim_simd::Vec<int32_t, 8> intv8;
typedef ldmsim_simd::Vec<uint32_t, 8> uintv8;
typedef ldmsim_simd::Vec<int64_t, 4, true> int256;
typedef ldmsim_simd::Vec<uint64_t, 4, true> uint256;
/* SW26010-Pro (512-bit registers). */
typedef ldmsim_simd::Vec<double, 8> doublev8;
typedef ldmsim_simd::Vec<float, 8> floatv8;
typedef ldmsim_simd::Vec<int32_t, 16> intv16;
typedef ldmsim_simd::Vec<uint32_t, 16> uintv16;
typedef ldmsim_simd::Vec<int64_t, 8, true> int512;
typedef ldmsim_simd::Vec<uint64_t, 8, true> uint512;

#define simd_load(var, addr) ldmsim_simd::load((var), (addr), "simd_load", true)
#define simd_store(var, addr) ldmsim_simd::store((var), (addr), "simd_store", true)
#define simd_loadu(var, addr) ldmsim_simd::load((var), (addr), "simd_loadu", false)
#define simd_storeu(var, addr) ldmsim_simd::store((var), (addr), "simd_storeu", false)
#define simd_loade(var, addr) ldmsim_simd::load_broadcast((var), (addr))

/* Lane i is argument i. */
inline doublev4 simd_set_doublev4(double a, double b, double c, double d) {
  return ldmsim_simd::set<doublev4>(a, b, c, d);
}
inline floatv4 simd_set_floatv4(float a, float b, float c, float d) {
  return ldmsim_simd::set<floatv4>(a, b, c, d);
}
inline intv8 simd_set_intv8(int a, int b, int c, int d, int e, int f, int g, int h) {
  return ldmsim_simd::set<intv8>(a, b, c, d, e, f, g, h);
}
inline uintv8 simd_set_uintv8(unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned f, unsigned g,
                              unsigned h) {
  return ldmsim_simd::set<uintv8>(a, b, c, d, e, f, g, h);
}
inline int256 simd_set_int256(long a, long b, long c, long d) {
  return ldmsim_simd::set<int256>(a, b, c, d);
}
inline uint256 simd_set_uint256(unsigned long a, unsigned long b, unsigned long c, unsigned long d) {
  return ldmsim_simd::set<uint256>(a, b, c, d);
}
inline doublev8 simd_set_doublev8(double a, double b, double c, double d, double e, double f, double g, double h) {
  return ldmsim_simd::set<doublev8>(a, b, c, d, e, f, g, h);
}
inline floatv8 simd_set_floatv8(float a, float b, float c, float d, float e, float f, float g, float h) {
  return ldmsim_simd::set<floatv8>(a, b, c, d, e, f, g, h);
}
inline int512 simd_set_int512(long a, long b, long c, long d, long e, long f, long g, long h) {
  return ldmsim_simd::set<int512>(a, b, c, d, e, f, g, h);
}
template <class... S>
inline intv16 simd_set_intv16(S... s) {
  return ldmsim_simd::set<intv16>(s...);
}
/* SW26010-Pro splats: simd_vcpyfd(x) is doublev8(x), simd_vcpyfs(x) floatv8(x). */
inline doublev8 simd_vcpyfd(double x) {
  doublev8::count_op();
  return doublev8(x);
}
inline floatv8 simd_vcpyfs(float x) {
  floatv8::count_op();
  return floatv8(x);
}

/* Element-wise arithmetic macros (simd_vaddd ...): simd.h, shared with the C compilation. */

/* Fused multiply-add family (one instruction each): vmad = a*b+c, vmas = a*b-c, vnmad = -(a*b)+c,
 * vnmas = -(a*b)-c, with d / s suffixed spellings. */
template <class T, int L, bool B>
inline ldmsim_simd::Vec<T, L, B> simd_vmad(const ldmsim_simd::Vec<T, L, B>& a, const ldmsim_simd::Vec<T, L, B>& b,
                                           const ldmsim_simd::Vec<T, L, B>& c) {
  return ldmsim_simd::fma(a, b, c, false, false);
}
template <class T, int L, bool B>
inline ldmsim_simd::Vec<T, L, B> simd_vmas(const ldmsim_simd::Vec<T, L, B>& a, const ldmsim_simd::Vec<T, L, B>& b,
                                           const ldmsim_simd::Vec<T, L, B>& c) {
  return ldmsim_simd::fma(a, b, c, false, true);
}
template <class T, int L, bool B>
inline ldmsim_simd::Vec<T, L, B> simd_vnmad(const ldmsim_simd::Vec<T, L, B>& a, const ldmsim_simd::Vec<T, L, B>& b,
                                            const ldmsim_simd::Vec<T, L, B>& c) {
  return ldmsim_simd::fma(a, b, c, true, false);
}
template <class T, int L, bool B>
inline ldmsim_simd::Vec<T, L, B> simd_vnmas(const ldmsim_simd::Vec<T, L, B>& a, const ldmsim_simd::Vec<T, L, B>& b,
                                            const ldmsim_simd::Vec<T, L, B>& c) {
  return ldmsim_simd::fma(a, b, c, true, true);
}
#define simd_vmadd simd_vmad
#define simd_vmads simd_vmad
#define simd_vmasd simd_vmas
#define simd_vmass simd_vmas
#define simd_vmsd simd_vmas
#define simd_vmss simd_vmas
#define simd_vnmadd simd_vnmad
#define simd_vnmads simd_vnmad
#define simd_vnmasd simd_vnmas
#define simd_vnmass simd_vnmas

/* Lane-wise: max, min, square root, comparisons (a lane is 2.0 when true, 0.0 when false, as on SW26010). */
#define LDMSIM_SIMD_LANEWISE2(name, expr)                                                                         \
  template <class T, int L, bool B>                                                                               \
  inline ldmsim_simd::Vec<T, L, B> name(const ldmsim_simd::Vec<T, L, B>& a, const ldmsim_simd::Vec<T, L, B>& b) { \
    return ldmsim_simd::lanewise(a, b, [](T x, T y) -> T { return expr; });                                       \
  }
LDMSIM_SIMD_LANEWISE2(simd_vmax, x > y ? x : y)
LDMSIM_SIMD_LANEWISE2(simd_vmin, x < y ? x : y)
LDMSIM_SIMD_LANEWISE2(simd_vfcmpeq, x == y ? T(2) : T(0))
LDMSIM_SIMD_LANEWISE2(simd_vfcmplt, x < y ? T(2) : T(0))
LDMSIM_SIMD_LANEWISE2(simd_vfcmple, x <= y ? T(2) : T(0))
LDMSIM_SIMD_LANEWISE2(simd_vfcmpun, x != x || y != y ? T(2) : T(0))
#undef LDMSIM_SIMD_LANEWISE2
#define simd_vmaxd simd_vmax
#define simd_vmind simd_vmin
#define simd_vmaxs simd_vmax
#define simd_vmins simd_vmin
#define simd_smaxd simd_vmax
#define simd_smind simd_vmin
#define simd_smaxs simd_vmax
#define simd_smins simd_vmin
#define simd_vfcmpeqd simd_vfcmpeq
#define simd_vfcmpltd simd_vfcmplt
#define simd_vfcmpled simd_vfcmple
#define simd_vfcmpund simd_vfcmpun
#define simd_vfcmpeqs simd_vfcmpeq
#define simd_vfcmplts simd_vfcmplt
#define simd_vfcmples simd_vfcmple
template <class T, int L, bool B>
inline ldmsim_simd::Vec<T, L, B> simd_vsqrt(const ldmsim_simd::Vec<T, L, B>& a) {
  ldmsim_simd::Vec<T, L, B>::count_long_op();
  ldmsim_simd::Vec<T, L, B> r;
  for (int i = 0; i < L; ++i) r.v[i] = static_cast<T>(__builtin_sqrt(static_cast<double>(a.v[i])));
  return r;
}
#define simd_vsqrtd simd_vsqrt
#define simd_vsqrts simd_vsqrt
/* Reciprocals 1 / x per lane (SW26010-Pro simd_vfrecpd / simd_vfrecps): computed exactly, charged as a divide. */
template <class T, int L, bool B>
inline ldmsim_simd::Vec<T, L, B> simd_vfrecp(const ldmsim_simd::Vec<T, L, B>& a) {
  ldmsim_simd::Vec<T, L, B>::count_long_op();
  return ldmsim_simd::Vec<T, L, B>(T(1) / a.v);
}
#define simd_vfrecpd simd_vfrecp
#define simd_vfrecps simd_vfrecp

/* Selects per lane: vseleq(c, a, b) = c == 0 ? a : b, vsellt = c < 0 ? a : b, vselle = c <= 0 ? a : b
 * (SW26010-Pro: simd_vfseleqd / vfselltd / vfselled). */
#define LDMSIM_SIMD_SELECT(name, test)                                                                          \
  template <class T, int L, bool B>                                                                             \
  inline ldmsim_simd::Vec<T, L, B> name(const ldmsim_simd::Vec<T, L, B>& c, const ldmsim_simd::Vec<T, L, B>& a, \
                                        const ldmsim_simd::Vec<T, L, B>& b) {                                   \
    ldmsim_simd::Vec<T, L, B>::count_op();                                                                      \
    ldmsim_simd::Vec<T, L, B> r;                                                                                \
    for (int i = 0; i < L; ++i) r.v[i] = c.v[i] test T(0) ? a.v[i] : b.v[i];                                    \
    return r;                                                                                                   \
  }
LDMSIM_SIMD_SELECT(simd_vseleq, ==)
LDMSIM_SIMD_SELECT(simd_vsellt, <)
LDMSIM_SIMD_SELECT(simd_vselle, <=)
#undef LDMSIM_SIMD_SELECT
#define simd_vfseleqd simd_vseleq
#define simd_vfselltd simd_vsellt
#define simd_vfselled simd_vselle
#define simd_vfseleqs simd_vseleq
#define simd_vfsellts simd_vsellt
#define simd_vfselles simd_vselle

/* Shuffle of 4-lane vectors (doublev4, floatv4): r[0] = b[imm & 3], r[1] = b[(imm >> 2) & 3],
 * r[2] = a[(imm >> 4) & 3], r[3] = a[(imm >> 6) & 3]: the low half from the second operand, the high half from
 * the first (simd_vshff(x, x, 0) broadcasts lane 0). */
template <class T, bool B>
inline ldmsim_simd::Vec<T, 4, B> simd_vshff(const ldmsim_simd::Vec<T, 4, B>& a, const ldmsim_simd::Vec<T, 4, B>& b,
                                            int imm) {
  ldmsim_simd::count_shuffle<ldmsim_simd::Vec<T, 4, B>>();
  ldmsim_simd::Vec<T, 4, B> r;
  r.v[0] = b.v[imm & 3];
  r.v[1] = b.v[(imm >> 2) & 3];
  r.v[2] = a.v[(imm >> 4) & 3];
  r.v[3] = a.v[(imm >> 6) & 3];
  return r;
}

/* SW26010-Pro shuffles of two 512-bit registers (16 32-bit words each) under an intv16 control: word i of the
 * result is word ((ctl >> 5i) & 31) of the concatenation a:b (0..15 from a, 16..31 from b), the control read as
 * one little-endian bit string (words 0..2 hold the 80 bits). doublev8 and floatv8 lanes occupy two words
 * each (a float lives in a 64-bit register slot), so a lane must be moved as an aligned word pair; the bit
 * layout of a float in its slot is not public, and a control that splits a lane traps. */
namespace ldmsim_simd {
inline int shuffle_field(const intv16& ctl, int i) {
  const int bit = 5 * i;
  const uint64_t low = static_cast<uint32_t>(ctl.v[bit / 32]);
  const uint64_t high = bit / 32 + 1 < 16 ? static_cast<uint32_t>(ctl.v[bit / 32 + 1]) : 0;
  return static_cast<int>(((low | (high << 32)) >> (bit % 32)) & 31);
}
template <class V>
inline V shuffle_words(const V& a, const V& b, const intv16& ctl, const char* api) {
  count_shuffle<V>();
  V r;
  if constexpr (V::lanes == 16) {
    for (int i = 0; i < 16; ++i) {
      const int f = shuffle_field(ctl, i);
      r.v[i] = f < 16 ? a.v[f] : b.v[f - 16];
    }
  } else {
    static_assert(V::lanes == 8, "a 512-bit shuffle of 8 or 16 lanes");
    for (int k = 0; k < 8; ++k) {
      const int lo = shuffle_field(ctl, 2 * k), hi = shuffle_field(ctl, 2 * k + 1);
      if (lo % 2 != 0 || hi != lo + 1) {
        char why[160];
        snprintf(why, sizeof why,
                 "control fields %d and %d (values %d, %d) split a 64-bit lane; only whole lanes are modelled", 2 * k,
                 2 * k + 1, lo, hi);
        __ldmsim_athread_unsupported(api, why);
      }
      r.v[k] = lo < 16 ? a.v[lo / 2] : b.v[(lo - 16) / 2];
    }
  }
  return r;
}
}  // namespace ldmsim_simd
inline floatv8 simd_vshfs(const floatv8& a, const floatv8& b, const intv16& ctl) {
  return ldmsim_simd::shuffle_words(a, b, ctl, "simd_vshfs");
}
inline doublev8 simd_vshfd(const doublev8& a, const doublev8& b, const intv16& ctl) {
  return ldmsim_simd::shuffle_words(a, b, ctl, "simd_vshfd");
}
inline intv16 simd_vshfw(const intv16& a, const intv16& b, const intv16& ctl) {
  return ldmsim_simd::shuffle_words(a, b, ctl, "simd_vshfw");
}
inline uintv16 simd_vshfw(const uintv16& a, const uintv16& b, const intv16& ctl) {
  return ldmsim_simd::shuffle_words(a, b, ctl, "simd_vshfw");
}

/* Lane extraction and insertion: simd_vextfN(v) is lane N; simd_vinsfN(x, v) is v with lane N replaced by lane 0
 * of x (SW26010). SW26010-Pro: simd_vextfd(v, n), simd_vinsfd(scalar, v, n). */
template <class V>
inline typename V::element_type ldmsim_simd_extract(const V& v, int n) {
  ldmsim_simd::count_shuffle<V>();
  return v.v[n];
}
template <class V>
inline V ldmsim_simd_insert(typename V::element_type x, V v, int n) {
  ldmsim_simd::count_shuffle<V>();
  v.v[n] = x;
  return v;
}
#define simd_vextf0(v) ldmsim_simd_extract((v), 0)
#define simd_vextf1(v) ldmsim_simd_extract((v), 1)
#define simd_vextf2(v) ldmsim_simd_extract((v), 2)
#define simd_vextf3(v) ldmsim_simd_extract((v), 3)
#define simd_vinsf0(x, v) ldmsim_simd_insert((x)[0], (v), 0)
#define simd_vinsf1(x, v) ldmsim_simd_insert((x)[0], (v), 1)
#define simd_vinsf2(x, v) ldmsim_simd_insert((x)[0], (v), 2)
#define simd_vinsf3(x, v) ldmsim_simd_insert((x)[0], (v), 3)
#define simd_vextfd(v, n) ldmsim_simd_extract((v), (n))
#define simd_vextfs(v, n) ldmsim_simd_extract((v), (n))
#define simd_vinsfd(x, v, n) ldmsim_simd_insert((x), (v), (n))
#define simd_vinsfs(x, v, n) ldmsim_simd_insert((x), (v), (n))

/* Horizontal reductions. */
template <class T, int L, bool B>
inline T simd_reduc_plus(const ldmsim_simd::Vec<T, L, B>& v) {
  return ldmsim_simd::reduce_sum(v);
}
#define simd_reduc_plusd simd_reduc_plus
#define simd_reduc_pluss simd_reduc_plus
#define simd_reduc_plusw simd_reduc_plus

/* simd_print_*: the SDK prints the highest lane first. */
template <class V>
inline void ldmsim_simd_print(const V& v, const char* format) {
  printf("[");
  for (int i = V::lanes - 1; i >= 0; --i) {
    printf(format, v.v[i]);
    printf(i == 0 ? " ]\n" : ",");
  }
}
inline void simd_print_doublev4(const doublev4& v) {
  ldmsim_simd_print(v, " %e");
}
inline void simd_print_floatv4(const floatv4& v) {
  ldmsim_simd_print(v, " %e");
}
inline void simd_print_intv8(const intv8& v) {
  ldmsim_simd_print(v, " %d");
}
inline void simd_print_doublev8(const doublev8& v) {
  ldmsim_simd_print(v, " %e");
}
inline void simd_print_floatv8(const floatv8& v) {
  ldmsim_simd_print(v, " %e");
}

}  // extern "C++"

#endif
