/* The Sunway simd.h vector types slave kernels use: doublev4, floatv4, intv8, uintv8, int256, uint256
 * (SW26010, 256-bit) and doublev8, floatv8, intv16, uintv16, int512, uint512 (SW26010-Pro, 512-bit), with loads,
 * stores and the simd_v* operations. A misaligned simd_load / simd_store is a lint warning (docs/athread.md).
 * Compiled as C++ (how ldmsim_add_athread_program builds .c slave files) the types are the classes of
 * ldmsim_simd_cxx.h: scalars splat (`doublev4 v = 0;`), casts convert, and every vector instruction is charged to
 * the core's simulated clock. Compiled as C they are GCC vector types: no splats, and vector work is free. */
#ifndef LDMSIM_SIMD_H
#define LDMSIM_SIMD_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ldmsim_athread_common.h"

/* 256/512-bit vectors passed by value without -mavx: GCC notes the ABI; the simulated core has no ABI to keep. */
#pragma GCC diagnostic ignored "-Wpsabi"

/* Element-wise arithmetic, the same spelling in both compilations (the operators work as well): d double, s
 * float, w 32-bit and l 64-bit integer lanes. */
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
#define simd_vaddl(a, b) ((a) + (b))
#define simd_vsubl(a, b) ((a) - (b))
#define simd_vandw(a, b) ((a) & (b))
#define simd_vbisw(a, b) ((a) | (b))
#define simd_vxorw(a, b) ((a) ^ (b))
#define simd_vsllw(a, n) ((a) << (n))

#ifdef __cplusplus
#define simd_vsrlw(a, n) ldmsim_simd::shift_right_logical((a), (n))
#include "ldmsim_simd_cxx_ops.h"
#else
#define simd_vsrlw(a, n) ((a) >> (n)) /* logical on the unsigned types; use uintv8 for intv8 data */
typedef double doublev4 __attribute__((vector_size(32)));
typedef float floatv4 __attribute__((vector_size(16)));
typedef int32_t intv8 __attribute__((vector_size(32)));
typedef uint32_t uintv8 __attribute__((vector_size(32)));
typedef double doublev8 __attribute__((vector_size(64)));
typedef float floatv8 __attribute__((vector_size(32)));
typedef int32_t intv16 __attribute__((vector_size(64)));

#define LDMSIM_SIMD_CHECK(addr, bytes, api)                                          \
  do {                                                                               \
    if (((uintptr_t)(const void*)(addr)) % (bytes) != 0)                             \
      __ldmsim_athread_simd_misaligned((api), (const void*)(addr), (size_t)(bytes)); \
  } while (0)

/** Aligned load of a vector: simd_load(v, ptr) (ptr aligned to the vector size). */
#define simd_load(var, addr)                           \
  do {                                                 \
    LDMSIM_SIMD_CHECK(addr, sizeof(var), "simd_load"); \
    memcpy(&(var), (const void*)(addr), sizeof(var));  \
  } while (0)
/** Aligned store: simd_store(v, ptr). */
#define simd_store(var, addr)                           \
  do {                                                  \
    LDMSIM_SIMD_CHECK(addr, sizeof(var), "simd_store"); \
    memcpy((void*)(addr), &(var), sizeof(var));         \
  } while (0)
/** Unaligned load / store. */
#define simd_loadu(var, addr) memcpy(&(var), (const void*)(addr), sizeof(var))
#define simd_storeu(var, addr) memcpy((void*)(addr), &(var), sizeof(var))
#define simd_loade(var, addr)                                                                                       \
  do {                                                                                                              \
    for (size_t ldmsim_i_ = 0; ldmsim_i_ < sizeof(var) / sizeof((var)[0]); ++ldmsim_i_) (var)[ldmsim_i_] = *(addr); \
  } while (0)

static inline doublev4 simd_set_doublev4(double a, double b, double c, double d) {
  doublev4 v = {a, b, c, d};
  return v;
}
static inline floatv4 simd_set_floatv4(float a, float b, float c, float d) {
  floatv4 v = {a, b, c, d};
  return v;
}
static inline intv8 simd_set_intv8(int a, int b, int c, int d, int e, int f, int g, int h) {
  intv8 v = {a, b, c, d, e, f, g, h};
  return v;
}
/** Fused multiply-add family: vmad = a*b+c, vmas = a*b-c, vnmad = -(a*b)+c, vnmas = -(a*b)-c. */
#define simd_vmad(a, b, c) ((a) * (b) + (c))
#define simd_vmas(a, b, c) ((a) * (b) - (c))
#define simd_vnmad(a, b, c) (-((a) * (b)) + (c))
#define simd_vnmas(a, b, c) (-((a) * (b)) - (c))
#define simd_vmadd simd_vmad
#define simd_vmads simd_vmad

static inline double simd_reduc_plusd(doublev4 v) {
  return v[0] + v[1] + v[2] + v[3];
}
static inline float simd_reduc_pluss(floatv4 v) {
  return v[0] + v[1] + v[2] + v[3];
}
static inline doublev4 simd_vmaxd(doublev4 a, doublev4 b) {
  doublev4 r;
  for (int i = 0; i < 4; ++i) r[i] = a[i] > b[i] ? a[i] : b[i];
  return r;
}
static inline doublev4 simd_vmind(doublev4 a, doublev4 b) {
  doublev4 r;
  for (int i = 0; i < 4; ++i) r[i] = a[i] < b[i] ? a[i] : b[i];
  return r;
}
static inline void simd_print_doublev4(doublev4 v) {
  printf("[%g, %g, %g, %g]\n", v[0], v[1], v[2], v[3]);
}
static inline void simd_print_intv8(intv8 v) {
  printf("[%d, %d, %d, %d, %d, %d, %d, %d]\n", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}

#endif /* __cplusplus */

#endif
