// binary16 <-> binary32 conversions: a portable bit-exact implementation and an F16C one (picked at run time
// by CPUID). Both round to nearest even and treat NaNs like VCVTPS2PH / VCVTPH2PS, so they give identical bits.
#include "ldmsim/sim/fp16.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ldmsim/sim/fp16_saturated.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define LDMSIM_FP16_HAVE_X86 1
#else
#define LDMSIM_FP16_HAVE_X86 0
#endif

namespace ldmsim {

namespace {

constexpr float kHalfMax = 65504.0f;       // fp16's largest finite value
constexpr float kHalfOverflow = 65520.0f;  // the smallest magnitude that rounds to an fp16 infinity

/// Whether `value` is finite and rounds to an fp16 infinity.
bool beyond_half_range(float value) noexcept {
  const float magnitude = value < 0 ? -value : value;
  return magnitude >= kHalfOverflow && magnitude <= std::numeric_limits<float>::max();
}

constexpr std::uint32_t kF32AbsMask = 0x7fff'ffffU;
constexpr std::uint32_t kF32Inf = 0x7f80'0000U;
constexpr std::uint32_t kF32QuietBit = 0x0040'0000U;
constexpr std::uint32_t kF32MinHalfNormal = 0x3880'0000U;  // 2^-14
constexpr std::uint32_t kF32HalfOverflow = 0x477f'f000U;   // 65520: halfway between 65504 and 2^16, rounds to inf
constexpr std::uint32_t kF32HalfUnderflow = 0x3300'0000U;  // 2^-25: halfway between 0 and 2^-24, rounds to 0
constexpr std::uint32_t kMantissaShift = 13;               // 23 - 10 fraction bits dropped
constexpr std::uint32_t kBiasDelta = (127U - 15U) << 23;   // exponent bias difference, in float position
constexpr std::uint16_t kHalfInf = 0x7c00U;
constexpr std::uint16_t kHalfQuietBit = 0x0200U;

}  // namespace

std::uint16_t float_to_half_bits_portable(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000U);
  const std::uint32_t abs = x & kF32AbsMask;

  if (abs >= kF32Inf) {
    if (abs == kF32Inf) return static_cast<std::uint16_t>(sign | kHalfInf);
    // NaN: like VCVTPS2PH, keep sign and the top 10 payload bits, force the quiet bit.
    const auto payload = static_cast<std::uint16_t>((abs >> kMantissaShift) & 0x03ffU);
    return static_cast<std::uint16_t>(sign | kHalfInf | kHalfQuietBit | payload);
  }
  if (abs >= kF32HalfOverflow) return static_cast<std::uint16_t>(sign | kHalfInf);

  if (abs >= kF32MinHalfNormal) {
    // Normal half: rebias, drop 13 fraction bits, round to nearest even (a carry into the exponent is correct,
    // and cannot reach inf because abs < 65520).
    std::uint32_t h = (abs - kBiasDelta) >> kMantissaShift;
    const std::uint32_t rest = abs & 0x1fffU;
    if (rest > 0x1000U || (rest == 0x1000U && (h & 1U) != 0)) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  if (abs <= kF32HalfUnderflow) return sign;  // includes float subnormals and the tie at 2^-25

  // Subnormal half (in units of 2^-24): value = m * 2^(e - 150) = (m >> (126 - e)) units. e is in 102..112.
  const std::uint32_t e = abs >> 23;
  const std::uint32_t m = (abs & 0x007f'ffffU) | 0x0080'0000U;
  const std::uint32_t shift = 126U - e;  // 14..24
  std::uint32_t h = m >> shift;
  const std::uint32_t rest = m & ((1U << shift) - 1U);
  const std::uint32_t halfway = 1U << (shift - 1U);
  if (rest > halfway || (rest == halfway && (h & 1U) != 0)) ++h;  // may carry to 0x400, the smallest normal
  return static_cast<std::uint16_t>(sign | h);
}

float half_bits_to_float_portable(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fU;
  std::uint32_t mant = bits & 0x03ffU;

  std::uint32_t out = 0;
  if (exp == 0x1fU) {
    // Inf stays inf; NaN keeps its payload and, like VCVTPH2PS, comes out quiet.
    out = sign | kF32Inf | (mant << kMantissaShift) | (mant != 0 ? kF32QuietBit : 0U);
  } else if (exp != 0) {
    out = sign | (((exp + 112U) << 23) | (mant << kMantissaShift));
  } else if (mant == 0) {
    out = sign;
  } else {
    // Subnormal half: normalise. mant * 2^-24 with the leading bit moved to position 10.
    std::uint32_t e = 113U;  // float exponent of 2^-14
    while ((mant & 0x0400U) == 0) {
      mant <<= 1;
      --e;
    }
    out = sign | (e << 23) | ((mant & 0x03ffU) << kMantissaShift);
  }
  return std::bit_cast<float>(out);
}

#if LDMSIM_FP16_HAVE_X86

namespace {

bool detect_f16c() noexcept {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx")) return false;  // also checks that the OS saves the YMM state
#if defined(__clang__)
  // clang 14 does not know the "f16c" feature string (tidy rejects it): read CPUID.1:ECX.F16C directly.
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & static_cast<unsigned>(bit_F16C)) != 0;
#else
  return __builtin_cpu_supports("f16c") != 0;
#endif
}

bool use_f16c() noexcept {
  static const bool available = detect_f16c();
  return available;
}

// Rounding control 0 in the immediate = round to nearest even, independent of MXCSR.RC.
constexpr int kRoundNearestEven = _MM_FROUND_TO_NEAREST_INT;

// _cvtss_sh / _cvtsh_ss are avoided: clang's _cvtss_sh macro uses a compound literal (-Wpedantic error).
__attribute__((target("avx,f16c"))) std::uint16_t float_to_half_bits_f16c(float value) noexcept {
  return static_cast<std::uint16_t>(_mm_cvtsi128_si32(_mm_cvtps_ph(_mm_set_ss(value), kRoundNearestEven)));
}

__attribute__((target("avx,f16c"))) float half_bits_to_float_f16c(std::uint16_t bits) noexcept {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
}

// Unaligned loads and stores (may alias anything), in ascending order, each vector read before its halves are
// written: in place, the halves of values [i, i + 8) end at byte 2i + 16, before the next values (byte 4i + 32).
__attribute__((target("avx,f16c"))) void float_bytes_to_halves_f16c(const char* from, std::size_t n,
                                                                    char* to) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(reinterpret_cast<const float*>(from + 4 * i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 2 * i), _mm256_cvtps_ph(v, kRoundNearestEven));
  }
  for (; i < n; ++i) {
    float value = 0.0f;
    std::memcpy(&value, from + 4 * i, sizeof value);
    const std::uint16_t half = float_to_half_bits_f16c(value);
    std::memcpy(to + 2 * i, &half, sizeof half);
  }
}

__attribute__((target("avx,f16c"))) std::size_t float_bytes_to_halves_saturated_f16c(const char* from, std::size_t n,
                                                                                     char* to) noexcept {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 overflow = _mm256_set1_ps(kHalfOverflow);
  const __m256 largest = _mm256_set1_ps(std::numeric_limits<float>::max());
  const __m256 limit = _mm256_set1_ps(kHalfMax);
  std::size_t saturated = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(reinterpret_cast<const float*>(from + 4 * i));
    const __m256 magnitude = _mm256_andnot_ps(sign, v);
    const __m256 over =
        _mm256_and_ps(_mm256_cmp_ps(magnitude, overflow, _CMP_GE_OQ), _mm256_cmp_ps(magnitude, largest, _CMP_LE_OQ));
    if (const int mask = _mm256_movemask_ps(over); mask != 0) {
      v = _mm256_blendv_ps(v, _mm256_or_ps(limit, _mm256_and_ps(sign, v)), over);
      saturated += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(mask)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 2 * i), _mm256_cvtps_ph(v, kRoundNearestEven));
  }
  for (; i < n; ++i) {
    float value = 0.0f;
    std::memcpy(&value, from + 4 * i, sizeof value);
    const f16 half = saturated_half(value, saturated);
    std::memcpy(to + 2 * i, &half.bits, sizeof half.bits);
  }
  return saturated;
}

__attribute__((target("avx,f16c"))) void halves_to_floats_f16c(const f16* in, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = half_bits_to_float_f16c(in[i].bits);
}

}  // namespace

#endif  // LDMSIM_FP16_HAVE_X86

bool f16c_available() noexcept {
#if LDMSIM_FP16_HAVE_X86
  return use_f16c();
#else
  return false;
#endif
}

std::uint16_t float_to_half_bits(float value) noexcept {
#if LDMSIM_FP16_HAVE_X86
  if (use_f16c()) return float_to_half_bits_f16c(value);
#endif
  return float_to_half_bits_portable(value);
}

float half_bits_to_float(std::uint16_t bits) noexcept {
#if LDMSIM_FP16_HAVE_X86
  if (use_f16c()) return half_bits_to_float_f16c(bits);
#endif
  return half_bits_to_float_portable(bits);
}

void floats_to_halves(std::span<const float> in, std::span<f16> out) noexcept {
  const std::size_t n = in.size() < out.size() ? in.size() : out.size();  // sizes must match; never overrun
  float_bytes_to_halves(in.data(), n, out.data());
}

void halves_to_floats(std::span<const f16> in, std::span<float> out) noexcept {
  const std::size_t n = in.size() < out.size() ? in.size() : out.size();  // sizes must match; never overrun
#if LDMSIM_FP16_HAVE_X86
  if (use_f16c()) {
    halves_to_floats_f16c(in.data(), out.data(), n);
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = half_bits_to_float_portable(in[i].bits);
}

void float_bytes_to_halves(const void* from, std::size_t count, void* to) noexcept {
  const auto* in = static_cast<const char*>(from);
  auto* out = static_cast<char*>(to);
#if LDMSIM_FP16_HAVE_X86
  if (use_f16c()) {
    float_bytes_to_halves_f16c(in, count, out);
    return;
  }
#endif
  for (std::size_t i = 0; i < count; ++i) {
    float value = 0.0f;
    std::memcpy(&value, in + 4 * i, sizeof value);
    const std::uint16_t half = float_to_half_bits_portable(value);
    std::memcpy(out + 2 * i, &half, sizeof half);
  }
}

std::size_t float_bytes_to_halves_saturated(const void* from, std::size_t count, void* to) noexcept {
  const auto* in = static_cast<const char*>(from);
  auto* out = static_cast<char*>(to);
#if LDMSIM_FP16_HAVE_X86
  if (use_f16c()) return float_bytes_to_halves_saturated_f16c(in, count, out);
#endif
  std::size_t saturated = 0;
  for (std::size_t i = 0; i < count; ++i) {
    float value = 0.0f;
    std::memcpy(&value, in + 4 * i, sizeof value);
    const f16 half = saturated_half(value, saturated);
    std::memcpy(out + 2 * i, &half.bits, sizeof half.bits);
  }
  return saturated;
}

f16 saturated_half(double value, std::size_t& saturated) noexcept {
  const auto single = static_cast<float>(value);  // a double just below 65520 rounds to it here
  if (beyond_half_range(single) || (std::isinf(single) && std::isfinite(value))) {
    ++saturated;
    return f16(value < 0 ? -kHalfMax : kHalfMax);
  }
  return f16(single);
}

SharedHalves::SharedHalves(std::vector<f16> values) : size_(values.size()) {
  auto owner = std::make_shared<const std::vector<f16>>(std::move(values));
  data_ = std::shared_ptr<const f16>(owner, owner->data());
}

}  // namespace ldmsim
