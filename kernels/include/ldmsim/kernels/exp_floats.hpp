// e^x for the kernels' fp32 arithmetic, a run at a time.
#pragma once

#include <cstddef>

namespace ldmsim {

/// out[i] = e^in[i] for i < n (in and out may be the same array). The result is the same float on every host:
/// glibc's expf algorithm (a 32-entry table of 2^(i/32) and a cubic for the rest, in double) with its
/// multiply-adds fused, which is what glibc's expf computes on any x86-64 with FMA: every one of the 2^32 inputs
/// gives the bits std::exp(float) gives there. On hosts without FMA, where glibc takes another build (which
/// differs in the last bit on a few inputs), the results stay these. Vectorised where the host has AVX2 and FMA.
void exp_floats(const float* in, float* out, std::size_t n);

/// e^a as exp_floats computes it (the same bits whether in a run or alone).
inline float exp_float(float a) {
  float y = 0.0f;
  exp_floats(&a, &y, 1);
  return y;
}

}  // namespace ldmsim
