// erf for the kernels' fp32 arithmetic, a run at a time.
#pragma once

#include <cstddef>

namespace ldmsim {

/// out[i] = erf(in[i]) for i < n (in and out may be the same array). The result is the same float on every host:
/// the algorithm of glibc's erff (fdlibm's rational approximations on [0, 0.84375) and [0.84375, 1.25), and
/// e^(-z^2 - 0.5625) e^((z - x)(z + x) + R/S) / x beyond, its exponentials from exp_floats), its float operations
/// in the same order, unfused: every one of the 2^32 inputs gives the bits std::erf(float) gives with glibc 2.36
/// (Debian 12) on an x86-64 with FMA and AVX2. A block of elements at a time: the branches below 1.25 and the
/// saturated ones are computed side by side and selected per element (a vector loop), then the elements in the tail
/// take theirs.
void erf_floats(const float* in, float* out, std::size_t n);

/// erf(a) as erf_floats computes it (the same bits whether in a run or alone).
inline float erf_float(float a) {
  float y = 0.0f;
  erf_floats(&a, &y, 1);
  return y;
}

}  // namespace ldmsim
