// Test helpers for the kernels' float functions checked bit for bit against the C library.
#pragma once

#include <bit>
#include <cstdint>

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

/// Whether the C library's erff is fdlibm's, whose algorithm erf_floats follows: glibc's through 2.40 (2.41 took a
/// correctly rounded one).
inline bool libc_erff_is_fdlibm() {
#if defined(__GLIBC__)
  return __GLIBC__ == 2 && __GLIBC_MINOR__ <= 40;
#else
  return false;
#endif
}

}  // namespace ldmsim::test
