// Test helpers for the kernels' float functions checked bit for bit against the C library.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdio>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace ldmsim::test {

inline std::uint32_t bits(float x) {
  return std::bit_cast<std::uint32_t>(x);
}

/// Whether glibc's expf (which its erff calls) is its FMA build here, whose bits the kernels give: glibc takes it
/// where the CPU has FMA and AVX2.
inline bool host_has_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

/// Whether the C library loaded is a glibc whose erff is fdlibm's and whose expf is the one exp_floats follows: 2.27
/// (the current expf) through 2.40 (2.41 took a correctly rounded erff). Asked of the library at run time, not of
/// the headers the test was built with.
inline bool libc_erff_is_fdlibm() {
#if defined(__GLIBC__)
  unsigned major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%u.%u", &major, &minor) != 2) return false;
  return major == 2 && minor >= 27 && minor <= 40;
#else
  return false;
#endif
}

}  // namespace ldmsim::test
