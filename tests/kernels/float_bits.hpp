// Test helpers for the kernels' float functions checked bit for bit against the C library.
#pragma once

#include <bit>
#include <cstdint>

namespace ldmsim::test {

inline std::uint32_t bits(float x) {
  return std::bit_cast<std::uint32_t>(x);
}

/// Whether this host has FMA, and so glibc's expf (which erff calls) is its FMA build, whose bits the kernels give.
inline bool host_has_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace ldmsim::test
