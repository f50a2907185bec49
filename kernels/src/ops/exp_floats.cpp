// e^x a run at a time (see exp_floats.hpp): four lanes of doubles with AVX2 and FMA (a gather for the table),
// element by element with std::fma elsewhere; overflow, underflow and NaN are set after either.
#include "ldmsim/kernels/exp_floats.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define LDMSIM_EXP_AVX2 1
#include <immintrin.h>
#else
#define LDMSIM_EXP_AVX2 0
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ldmsim {

namespace {

// 2^(i/32) rounded to double, its exponent field less i/32's integer part shifted in (i << 47): adding
// k << 47 to entry k mod 32 gives 2^(k/32) for any integer k in range.
constexpr std::uint64_t kPowers[32] = {0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
                                       0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
                                       0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
                                       0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
                                       0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
                                       0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
                                       0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
                                       0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr double kScaledInvLn2 = 0x1.71547652b82fep+0 * 32;  // 32 / ln 2: x in units of ln(2)/32
constexpr double kRoundShift = 0x1.8p+52;                    // adding it rounds to an integer, ties to even
// 2^(r/32) - 1 ~ r (c2 + r (c1 + r c0)) for |r| <= 1/2.
constexpr double kC0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32, kC1 = 0x1.ebfce50fac4f3p-3 / 32 / 32,
                 kC2 = 0x1.62e42ff0c52d6p-1 / 32;

/// e^x of one element as if it were in [log(2^-150), log(2^128)] (the others are set after).
inline float exp_in_range(float in) {
  const double x = in;
  double k = std::fma(kScaledInvLn2, x, kRoundShift);  // x / (ln(2)/32) rounded to an integer k
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(k);
  k -= kRoundShift;
  const double r = std::fma(kScaledInvLn2, x, -k);                                // what is left, in [-1/2, 1/2]
  const double scale = std::bit_cast<double>(kPowers[bits % 32] + (bits << 47));  // 2^(k/32)
  const double r2 = r * r;
  const double y = std::fma(std::fma(kC0, r, kC1), r2, std::fma(kC2, r, 1.0));
  return static_cast<float>(y * scale);
}

#if LDMSIM_EXP_AVX2
/// exp_in_range of four elements at a time: the same operations lane by lane.
[[gnu::target("avx2,fma")]] void exp_run_avx2(const float* in, float* out, std::size_t n) {
  const __m256d inv_ln2 = _mm256_set1_pd(kScaledInvLn2), shift = _mm256_set1_pd(kRoundShift);
  const __m256d c0 = _mm256_set1_pd(kC0), c1 = _mm256_set1_pd(kC1), c2 = _mm256_set1_pd(kC2), one = _mm256_set1_pd(1.0);
  const __m256i low_five = _mm256_set1_epi64x(31);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(in + i));
    __m256d k = _mm256_fmadd_pd(inv_ln2, x, shift);
    const __m256i bits = _mm256_castpd_si256(k);
    k = _mm256_sub_pd(k, shift);
    const __m256d r = _mm256_fmsub_pd(inv_ln2, x, k);  // one rounding, as std::fma(a, b, -c)
    const __m256i entry =
        _mm256_i64gather_epi64(reinterpret_cast<const long long*>(kPowers), _mm256_and_si256(bits, low_five), 8);
    const __m256d scale = _mm256_castsi256_pd(_mm256_add_epi64(entry, _mm256_slli_epi64(bits, 47)));
    const __m256d r2 = _mm256_mul_pd(r, r);
    const __m256d y = _mm256_fmadd_pd(_mm256_fmadd_pd(c0, r, c1), r2, _mm256_fmadd_pd(c2, r, one));
    _mm_storeu_ps(out + i, _mm256_cvtpd_ps(_mm256_mul_pd(y, scale)));
  }
  for (; i < n; ++i) out[i] = exp_in_range(in[i]);
}

#endif

void exp_run(const float* in, float* out, std::size_t n) {
#if LDMSIM_EXP_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) return exp_run_avx2(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = exp_in_range(in[i]);
}

}  // namespace

void exp_floats(const float* in, float* out, std::size_t n) {
  // Beyond the run's range: e^x overflows to +inf above log(2^128), is 0 below log(2^-150), and a NaN comes out
  // quiet (x + x). Those inputs are saved before an in-place run overwrites them.
  constexpr float kHighest = 0x1.62e42ep6f, kLowest = -0x1.9fe368p6f;
  const auto in_range = [](float x) { return x >= kLowest && x <= kHighest; };
  constexpr std::size_t kBlock = 256;
  float saved[kBlock];
  for (std::size_t at = 0; at < n; at += kBlock) {
    const std::size_t m = n - at < kBlock ? n - at : kBlock;
    bool all_in_range = true;
    for (std::size_t i = 0; i < m; ++i) all_in_range &= in_range(in[at + i]);
    if (!all_in_range) std::copy(in + at, in + at + m, saved);
    exp_run(in + at, out + at, m);
    if (all_in_range) continue;
    for (std::size_t i = 0; i < m; ++i) {
      const float x = saved[i];
      if (std::isnan(x)) {
        out[at + i] = x + x;
      } else if (x > kHighest) {
        out[at + i] = std::numeric_limits<float>::infinity();
      } else if (x < kLowest) {
        out[at + i] = 0.0f;
      }
    }
  }
}

}  // namespace ldmsim
