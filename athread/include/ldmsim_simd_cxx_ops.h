/* simd.h for slave files compiled as C++: the Sunway vector types as ldmsim_simd::Vec classes and the simd_*
 * operations on them, each charged as the vector instruction(s) it stands for. Included by simd.h. */
#ifndef LDMSIM_SIMD_CXX_OPS_H
#define LDMSIM_SIMD_CXX_OPS_H

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

/* Element-wise arithmetic (the operators work as well); d double, s float, w 32-bit integer lanes. */
#define simd_vaddd(a, b) ((a) + (b))
#define simd_vsubd(a, b) ((a) - (b))
#define simd_vmuld(a, b) ((a) * (b))
#define simd_vdivd(a, b) ((a) / (b))
#define simd_vadds(a, b) ((a) + (b))
#define simd_vsubs(a, b) ((a) - (b))
#define simd_vmuls(a, b) ((a) * (b))
#define simd_vdivs(a, b) ((a) / (b))
#define simd_vaddw(a, b) ((a) + (b))
#define simd_vsubw(a, b) ((a) - (b))
#define simd_vandw(a, b) ((a) & (b))
#define simd_vbisw(a, b) ((a) | (b))
#define simd_vxorw(a, b) ((a) ^ (b))
#define simd_vsllw(a, n) ((a) << (n))
#define simd_vsrlw(a, n) ((a) >> (n))

/* Fused multiply-add family (one instruction each): vmad = a*b+c, vmas = a*b-c, vnmad = -(a*b)+c,
 * vnmas = -(a*b)-c, with d / s suffixed spellings. */
template <class V>
inline V simd_vmad(const V& a, const V& b, const V& c) {
  return ldmsim_simd::fma(a, b, c, false, false);
}
template <class V>
inline V simd_vmas(const V& a, const V& b, const V& c) {
  return ldmsim_simd::fma(a, b, c, false, true);
}
template <class V>
inline V simd_vnmad(const V& a, const V& b, const V& c) {
  return ldmsim_simd::fma(a, b, c, true, false);
}
template <class V>
inline V simd_vnmas(const V& a, const V& b, const V& c) {
  return ldmsim_simd::fma(a, b, c, true, true);
}
#define simd_vmadd simd_vmad
#define simd_vmads simd_vmad
#define simd_vmasd simd_vmas
#define simd_vmass simd_vmas
#define simd_vnmadd simd_vnmad
#define simd_vnmads simd_vnmad
#define simd_vnmasd simd_vnmas
#define simd_vnmass simd_vnmas

template <class V>
inline V simd_vmax(const V& a, const V& b) {
  return ldmsim_simd::lanewise(a, b, [](auto x, auto y) { return x > y ? x : y; });
}
template <class V>
inline V simd_vmin(const V& a, const V& b) {
  return ldmsim_simd::lanewise(a, b, [](auto x, auto y) { return x < y ? x : y; });
}
#define simd_vmaxd simd_vmax
#define simd_vmind simd_vmin
#define simd_vmaxs simd_vmax
#define simd_vmins simd_vmin

inline double simd_reduc_plusd(const doublev4& v) {
  return ldmsim_simd::reduce_sum(v);
}
inline float simd_reduc_pluss(const floatv4& v) {
  return ldmsim_simd::reduce_sum(v);
}
inline double simd_reduc_plusd(const doublev8& v) {
  return ldmsim_simd::reduce_sum(v);
}
inline float simd_reduc_pluss(const floatv8& v) {
  return ldmsim_simd::reduce_sum(v);
}

inline void simd_print_doublev4(const doublev4& v) {
  printf("[%g, %g, %g, %g]\n", v[0], v[1], v[2], v[3]);
}
inline void simd_print_floatv4(const floatv4& v) {
  printf("[%g, %g, %g, %g]\n", v[0], v[1], v[2], v[3]);
}
inline void simd_print_intv8(const intv8& v) {
  printf("[%d, %d, %d, %d, %d, %d, %d, %d]\n", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}

}  // extern "C++"

#endif
