// erf a run at a time (erf_floats.hpp), in float operations the compiler neither fuses nor reorders
// (kernels/CMakeLists.txt: -ffp-contract=off, and no -ffast-math): the same operations as glibc's erff, so the
// same bits, whatever the vector width.
#include "ldmsim/kernels/erf_floats.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "ldmsim/kernels/exp_floats.hpp"

namespace ldmsim {
namespace {

constexpr float bits(std::uint32_t b) {
  return std::bit_cast<float>(b);
}

// The approximations' coefficients, by their bit patterns.
constexpr float kTiny = 1e-30f, kOne = 1.0f;
constexpr float kErx = bits(0x3f58560b);  // erf(1) rounded: the constant term on [0.84375, 1.25)
constexpr float kEfx = bits(0x3e0375d4);  // 2/sqrt(pi) - 1
// erf(x) = x + x P(x^2)/Q(x^2) on |x| < 0.84375.
constexpr float kP0 = bits(0x3e0375d4), kP1 = bits(0xbea66beb), kP2 = bits(0xbce9528f), kP3 = bits(0xbbbd1489),
                kP4 = bits(0xb7c756b1);
constexpr float kQ1 = bits(0x3ecbbbce), kQ2 = bits(0x3d852a63), kQ3 = bits(0x3ba68116), kQ4 = bits(0x390aee49),
                kQ5 = bits(0xb684e21a);
// erf(x) = erx + P(s)/Q(s), s = |x| - 1, on [0.84375, 1.25).
constexpr float kPa0 = bits(0xbb1acdc6), kPa1 = bits(0x3ed46805), kPa2 = bits(0xbebe9208), kPa3 = bits(0x3ea2fe54),
                kPa4 = bits(0xbde31cc2), kPa5 = bits(0x3d1151b3), kPa6 = bits(0xbb0df9c0);
constexpr float kQa1 = bits(0x3dd9f331), kQa2 = bits(0x3f0a5785), kQa3 = bits(0x3d931ae7), kQa4 = bits(0x3e013307),
                kQa5 = bits(0x3c5f6e13), kQa6 = bits(0x3c445aa3);
// erfc's R(s)/S(s), s = 1/x^2, on [1.25, 1/0.35) ...
constexpr float kRa0 = bits(0xbc21a093), kRa1 = bits(0xbf31a0b7), kRa2 = bits(0xc128f022), kRa3 = bits(0xc2798057),
                kRa4 = bits(0xc322658c), kRa5 = bits(0xc3389ae7), kRa6 = bits(0xc2a2932b), kRa7 = bits(0xc11d077e);
constexpr float kSa1 = bits(0x419d35ce), kSa2 = bits(0x4309a863), kSa3 = bits(0x43d9486f), kSa4 = bits(0x442158c9),
                kSa5 = bits(0x43d6810b), kSa6 = bits(0x42d9451f), kSa7 = bits(0x40d23f7c), kSa8 = bits(0xbd777f97);
// ... and on [1/0.35, 6).
constexpr float kRb0 = bits(0xbc21a092), kRb1 = bits(0xbf4c9dd4), kRb2 = bits(0xc18e104b), kRb3 = bits(0xc320a2ea),
                kRb4 = bits(0xc41f6441), kRb5 = bits(0xc480230b), kRb6 = bits(0xc3f1c275);
constexpr float kSb1 = bits(0x41f2b459), kSb2 = bits(0x43a2e571), kSb3 = bits(0x44c01759), kSb4 = bits(0x4547fdbb),
                kSb5 = bits(0x451f90ce), kSb6 = bits(0x43ed43a7), kSb7 = bits(0xc1b38712);

// Bounds on |x|'s bit pattern.
constexpr std::uint32_t kInfinite = 0x7f800000, kBelowMid = 0x3f580000, kBelowTail = 0x3fa00000,
                        kSaturated = 0x40c00000, kFirstTail = 0x4036db6e, kTinyBound = 0x31800000,
                        kSubTinyBound = 0x04000000;

/// c ? a : b in integer operations on the bits, which vectorise where GCC leaves a float select as a branch.
inline float select(bool c, float a, float b) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(a) & mask) | (std::bit_cast<std::uint32_t>(b) & ~mask));
}

/// erf(x) for every x but the tail [1.25, 6), where it is 0 (erf_floats finishes those from their exponentials).
inline float head(float x) {
  const std::uint32_t hx = std::bit_cast<std::uint32_t>(x), ix = hx & 0x7fffffffu;
  const bool negative = (hx >> 31) != 0;
  // |x| < 0.84375
  const float z = x * x;
  const float r = kP0 + z * (kP1 + z * (kP2 + z * (kP3 + z * kP4)));
  const float s = kOne + z * (kQ1 + z * (kQ2 + z * (kQ3 + z * (kQ4 + z * kQ5))));
  const float near = x + x * (r / s);
  const float tiny = x + kEfx * x;                                    // |x| < 2^-28
  const float sub_tiny = 0.0625f * (16.0f * x + (16.0f * kEfx) * x);  // where kEfx * x would underflow
  // [0.84375, 1.25)
  const float m = std::bit_cast<float>(ix) - kOne;
  const float p = kPa0 + m * (kPa1 + m * (kPa2 + m * (kPa3 + m * (kPa4 + m * (kPa5 + m * kPa6)))));
  const float q = kOne + m * (kQa1 + m * (kQa2 + m * (kQa3 + m * (kQa4 + m * (kQa5 + m * kQa6)))));
  const float pq = p / q;
  const float mid = select(negative, -kErx - pq, kErx + pq);
  const float edge = select(negative, -1.0f, 1.0f) + kOne / x;  // +-inf: +-1; NaN: x's
  const float saturated = select(negative, kTiny - kOne, kOne - kTiny);
  // Selected without a branch, so the loop over a run vectorises.
  float value = select(ix >= kSubTinyBound, tiny, sub_tiny);
  value = select(ix >= kTinyBound, near, value);
  value = select(ix >= kBelowMid, mid, value);
  value = select(ix >= kBelowTail, 0.0f, value);
  value = select(ix >= kSaturated, saturated, value);
  return select(ix >= kInfinite, edge, value);
}

/// For |x| in the tail [1.25, 6): e^(-z^2 - 0.5625) and e^((z - |x|)(z + |x|) + R/S) are erfc(|x|) |x|, z being |x|
/// with its low 12 bits cleared; these are the two exponents.
inline void tail_exponents(float ax, float& exponent1, float& exponent2) {
  const std::uint32_t ix = std::bit_cast<std::uint32_t>(ax);
  const float t = kOne / (ax * ax);
  const float ra = kRa0 + t * (kRa1 + t * (kRa2 + t * (kRa3 + t * (kRa4 + t * (kRa5 + t * (kRa6 + t * kRa7))))));
  const float sa =
      kOne + t * (kSa1 + t * (kSa2 + t * (kSa3 + t * (kSa4 + t * (kSa5 + t * (kSa6 + t * (kSa7 + t * kSa8)))))));
  const float rb = kRb0 + t * (kRb1 + t * (kRb2 + t * (kRb3 + t * (kRb4 + t * (kRb5 + t * kRb6)))));
  const float sb = kOne + t * (kSb1 + t * (kSb2 + t * (kSb3 + t * (kSb4 + t * (kSb5 + t * (kSb6 + t * kSb7))))));
  const float big_r = select(ix < kFirstTail, ra, rb), big_s = select(ix < kFirstTail, sa, sb);
  const float z = std::bit_cast<float>(ix & 0xfffff000u);
  exponent1 = -z * z - 0.5625f;
  exponent2 = (z - ax) * (z + ax) + big_r / big_s;
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]  // wider vectors, the same operations
#endif
void erf_floats(const float* in, float* out, std::size_t n) {
  // A block at a time: every element's head (branch-free), then the tail's elements gathered, their exponentials
  // taken by exp_floats, and their values put back. Activations rarely reach the tail, so it costs only where used.
  constexpr std::size_t kBlock = 256;
  float value[kBlock], ax[kBlock], e1[kBlock], e2[kBlock];
  std::uint16_t index[kBlock];
  for (std::size_t at = 0; at < n; at += kBlock) {
    const std::size_t count = std::min(kBlock, n - at);
    for (std::size_t i = 0; i < count; ++i) value[i] = head(in[at + i]);
    std::size_t tails = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t ix = std::bit_cast<std::uint32_t>(in[at + i]) & 0x7fffffffu;
      if (ix >= kBelowTail && ix < kSaturated) {
        index[tails] = static_cast<std::uint16_t>(i);
        ax[tails++] = std::bit_cast<float>(ix);
      }
    }
    for (std::size_t j = 0; j < tails; ++j) tail_exponents(ax[j], e1[j], e2[j]);
    exp_floats(e1, e1, tails);
    exp_floats(e2, e2, tails);
    for (std::size_t j = 0; j < tails; ++j) {
      const float r = e1[j] * e2[j];
      value[index[j]] = in[at + index[j]] < 0.0f ? r / ax[j] - kOne : kOne - r / ax[j];
    }
    for (std::size_t i = 0; i < count; ++i) out[at + i] = value[i];
  }
}

}  // namespace ldmsim
