// fp16 conversions: exhaustive over all halves, structured + seeded-random floats against an independent
// reference (exact double arithmetic over a table of every half), portable vs F16C bit equality, bulk tails.
#include "ldmsim/sim/fp16.hpp"

#include "ldmsim/sim/fp16_saturated.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using ldmsim::f16;

constexpr std::size_t kPositiveFinite = 0x7c00;  // halves 0x0000..0x7bff

// Every positive finite half as an exact double, plus 2^16 at index 0x7c00: the value the next half would
// have with an unbounded exponent, so rounding to it means overflow to inf (whose bits are 0x7c00).
const std::vector<double>& half_table() {
  static const std::vector<double> table = [] {
    std::vector<double> t(kPositiveFinite + 1);
    for (std::size_t i = 0; i < kPositiveFinite; ++i) {
      const int exp = static_cast<int>(i >> 10);
      const int mant = static_cast<int>(i & 0x3ffU);
      t[i] = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
    }
    t[kPositiveFinite] = 65536.0;
    return t;
  }();
  return table;
}

bool half_is_nan(std::uint16_t h) {
  return (h & 0x7c00U) == 0x7c00U && (h & 0x03ffU) != 0;
}

// Reference decoding of a non-NaN half.
double reference_half_value(std::uint16_t h) {
  const double sign = (h & 0x8000U) != 0 ? -1.0 : 1.0;
  const std::uint16_t abs = h & 0x7fffU;
  if (abs == 0x7c00U) return sign * std::numeric_limits<double>::infinity();
  return sign * half_table()[abs];
}

// Reference float->half: nearest half by exact comparison (2|x| against the sum of the two neighbouring
// halves, both exact in double), ties to the even encoding. NaN: sign kept, top 10 payload bits kept,
// quiet bit forced (VCVTPS2PH behaviour).
std::uint16_t reference_float_to_half(float f) {
  const auto sign = static_cast<std::uint16_t>(std::signbit(f) ? 0x8000U : 0U);
  if (std::isnan(f)) {
    const auto payload = static_cast<std::uint16_t>((std::bit_cast<std::uint32_t>(f) >> 13) & 0x3ffU);
    return static_cast<std::uint16_t>(sign | 0x7e00U | payload);
  }
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65536.0) return static_cast<std::uint16_t>(sign | 0x7c00U);
  const std::vector<double>& t = half_table();
  const auto hi = static_cast<std::size_t>(std::upper_bound(t.begin(), t.end(), a) - t.begin());
  const std::size_t lo = hi - 1;  // t[0] == 0 <= a, and a < t.back(), so 1 <= hi <= 0x7c00
  std::size_t pick = lo;
  if (t[lo] != a) {
    const double twice = 2.0 * a;
    const double mid2 = t[lo] + t[hi];
    if (twice > mid2 || (twice == mid2 && (hi & 1U) == 0)) pick = hi;
  }
  return static_cast<std::uint16_t>(sign | pick);
}

std::uint32_t bits_of(float f) {
  return std::bit_cast<std::uint32_t>(f);
}
float float_of(std::uint32_t b) {
  return std::bit_cast<float>(b);
}

std::string hex(std::uint32_t v) {
  static constexpr std::array<char, 16> kDigits{'0', '1', '2', '3', '4', '5', '6', '7',
                                                '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += kDigits[(v >> static_cast<unsigned>(shift)) & 0xfU];
  return s;
}

// Collects mismatches without one Catch assertion per sample (millions of them); reports the first few.
struct Mismatches {
  std::size_t count = 0;
  std::string first;
  void add(const std::string& what) {
    if (count++ < 8) first += what + "\n";
  }
};

// Adds f and its float neighbours within `radius` ulps (both signs) to `out`.
void add_neighbourhood(std::vector<std::uint32_t>& out, std::uint32_t abs_bits, std::uint32_t radius) {
  const std::uint32_t from = abs_bits > radius ? abs_bits - radius : 0U;
  for (std::uint32_t b = from; b <= abs_bits + radius; ++b) {
    out.push_back(b);
    out.push_back(b | 0x8000'0000U);
  }
}

std::vector<std::uint32_t> structured_float_samples() {
  std::vector<std::uint32_t> s;
  const std::vector<double>& t = half_table();
  // Every half value, and every midpoint between adjacent halves (incl. 65520 between 65504 and 2^16),
  // with +-2 float ulps around each: exact ties and their nearest non-ties, normal and subnormal.
  for (std::size_t i = 0; i < kPositiveFinite; ++i) {
    add_neighbourhood(s, bits_of(static_cast<float>(t[i])), 2);
    add_neighbourhood(s, bits_of(static_cast<float>((t[i] + t[i + 1]) / 2.0)), 2);
  }
  // Subnormal / underflow / overflow boundaries, with a wider neighbourhood.
  for (const float f : {0x1p-14f, 0x1p-15f, 0x1p-24f, 0x1.8p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, 0x1p-14f - 0x1p-24f,
                        65504.0f, 65519.0f, 65520.0f, 65536.0f, std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min()}) {
    add_neighbourhood(s, bits_of(f), 300);
  }
  // Largest float subnormal down to the smallest, zeros, infinities.
  add_neighbourhood(s, 0x007f'ffffU, 300);
  add_neighbourhood(s, 0U, 300);
  add_neighbourhood(s, 0x7f80'0000U, 0);
  // NaNs: quiet and signalling, payloads in the kept top bits, only in the truncated low bits, all ones.
  for (const std::uint32_t payload :
       {0x1U, 0x2U, 0xfffU, 0x1000U, 0x1fffU, 0x2000U, 0x3fe000U, 0x3fffffU, 0x155555U, 0x2aaaaaU, 0x400000U, 0x400001U,
        0x401000U, 0x7fe000U, 0x7fffffU, 0x600000U, 0x5a5a5aU}) {
    s.push_back(0x7f80'0000U | payload);
    s.push_back(0xff80'0000U | payload);
  }
  return s;
}

std::vector<std::uint32_t> random_float_samples() {
  std::mt19937_64 rng(0x1d5a'f16eULL);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible on purpose
  std::vector<std::uint32_t> s;
  constexpr std::size_t kUniform = 3'000'000;
  constexpr std::size_t kHalfRange = 2'000'000;
  s.reserve(kUniform + kHalfRange);
  // Uniform bit patterns (mostly far outside the half range) ...
  for (std::size_t i = 0; i < kUniform; ++i) s.push_back(static_cast<std::uint32_t>(rng()));
  // ... and patterns whose exponent lies in or next to the half range (float exponents 98..145).
  std::uniform_int_distribution<std::uint32_t> exp_dist(98, 145);
  for (std::size_t i = 0; i < kHalfRange; ++i) {
    const auto r = static_cast<std::uint32_t>(rng());
    s.push_back((r & 0x807f'ffffU) | (exp_dist(rng) << 23));
  }
  return s;
}

void check_floats(const std::vector<std::uint32_t>& samples) {
  Mismatches vs_reference;
  Mismatches vs_f16c;
  const bool f16c = ldmsim::f16c_available();
  for (const std::uint32_t b : samples) {
    const float f = float_of(b);
    const std::uint16_t portable = ldmsim::float_to_half_bits_portable(f);
    const std::uint16_t expected = reference_float_to_half(f);
    if (portable != expected) vs_reference.add(hex(b) + ": portable " + hex(portable) + " reference " + hex(expected));
    if (f16c) {
      const std::uint16_t fast = ldmsim::float_to_half_bits(f);
      if (fast != portable) vs_f16c.add(hex(b) + ": portable " + hex(portable) + " f16c " + hex(fast));
    }
  }
  INFO("samples: " << samples.size() << ", f16c: " << f16c);
  INFO(vs_reference.first);
  CHECK(vs_reference.count == 0);
  INFO(vs_f16c.first);
  CHECK(vs_f16c.count == 0);
}

}  // namespace

TEST_CASE("fp16: every half converts to float exactly and back", "[fp16]") {
  Mismatches decode;
  Mismatches round_trip;
  Mismatches vs_f16c;
  const bool f16c = ldmsim::f16c_available();
  for (std::uint32_t i = 0; i <= 0xffffU; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float f = ldmsim::half_bits_to_float_portable(h);
    const std::uint32_t fb = bits_of(f);
    if (half_is_nan(h)) {
      // NaN stays NaN: sign and payload kept, quiet bit set (what VCVTPH2PS does).
      const std::uint32_t want = (static_cast<std::uint32_t>(h & 0x8000U) << 16) | 0x7f80'0000U |
                                 (static_cast<std::uint32_t>(h & 0x3ffU) << 13) | 0x0040'0000U;
      if (fb != want) decode.add(hex(h) + " -> " + hex(fb) + " want " + hex(want));
      const auto back = ldmsim::float_to_half_bits_portable(f);
      if (back != (h | 0x0200U)) round_trip.add(hex(h) + " -> " + hex(back));
    } else {
      const double want = reference_half_value(h);
      if (static_cast<double>(f) != want || std::signbit(f) != ((h & 0x8000U) != 0)) {
        decode.add(hex(h) + " -> " + hex(fb));
      }
      const auto back = ldmsim::float_to_half_bits_portable(f);
      if (back != h) round_trip.add(hex(h) + " -> " + hex(fb) + " -> " + hex(back));
    }
    if (f16c) {
      const std::uint32_t fast = bits_of(ldmsim::half_bits_to_float(h));
      if (fast != fb) vs_f16c.add(hex(h) + ": portable " + hex(fb) + " f16c " + hex(fast));
      const auto back_fast = ldmsim::float_to_half_bits(f);
      if (back_fast != ldmsim::float_to_half_bits_portable(f)) vs_f16c.add(hex(h) + " back: f16c " + hex(back_fast));
    }
  }
  INFO(decode.first);
  CHECK(decode.count == 0);
  INFO(round_trip.first);
  CHECK(round_trip.count == 0);
  INFO(vs_f16c.first);
  CHECK(vs_f16c.count == 0);
}

TEST_CASE("fp16: structured floats (ties, subnormal and overflow boundaries, NaN) match the reference", "[fp16]") {
  check_floats(structured_float_samples());
}

TEST_CASE("fp16: seeded random floats match the reference", "[fp16]") {
  check_floats(random_float_samples());
}

TEST_CASE("fp16: known values", "[fp16]") {
  using ldmsim::float_to_half_bits_portable;
  CHECK(float_to_half_bits_portable(1.0f) == 0x3c00U);
  CHECK(float_to_half_bits_portable(-2.0f) == 0xc000U);
  CHECK(float_to_half_bits_portable(65504.0f) == 0x7bffU);
  CHECK(float_to_half_bits_portable(65519.99f) == 0x7bffU);
  CHECK(float_to_half_bits_portable(65520.0f) == 0x7c00U);
  CHECK(float_to_half_bits_portable(-65520.0f) == 0xfc00U);
  CHECK(float_to_half_bits_portable(0x1p-24f) == 0x0001U);
  CHECK(float_to_half_bits_portable(0x1p-25f) == 0x0000U);           // tie -> even (zero)
  CHECK(float_to_half_bits_portable(0x1.000002p-25f) == 0x0001U);    // just above the tie
  CHECK(float_to_half_bits_portable(0x1.8p-24f) == 0x0002U);         // tie between 1 and 2 units -> 2
  CHECK(float_to_half_bits_portable(1.0f + 0x1p-11f) == 0x3c00U);    // tie -> even
  CHECK(float_to_half_bits_portable(1.0f + 0x1.8p-10f) == 0x3c02U);  // tie -> even (up)
  CHECK(float_to_half_bits_portable(0x1.ff8p-15f) == 0x03ffU);       // largest subnormal
  CHECK(float_to_half_bits_portable(0x1.ffcp-15f) == 0x0400U);       // tie rounds up into the normals
  CHECK(float_to_half_bits_portable(-0.0f) == 0x8000U);
  CHECK(float_to_half_bits_portable(float_of(0x7f80'0001U)) == 0x7e00U);         // sNaN, payload only in low bits
  CHECK(float_to_half_bits_portable(float_of(0xffc0'0000U)) == 0xfe00U);         // negative default qNaN
  CHECK(float_to_half_bits_portable(float_of(0x7fa0'0000U)) == 0x7f00U);         // sNaN payload kept, quieted
  CHECK(bits_of(ldmsim::half_bits_to_float_portable(0x7c01U)) == 0x7fc0'2000U);  // sNaN half -> qNaN float

  const f16 one(1.0f);
  CHECK(one.bits == 0x3c00U);
  CHECK(static_cast<float>(one) == 1.0f);
  CHECK(one == f16::from_bits(0x3c00U));
  CHECK_FALSE(one == f16::from_bits(0xbc00U));
  CHECK(f16{}.bits == 0U);
}

TEST_CASE("fp16: conversions ignore the host rounding mode", "[fp16]") {
  const std::vector<float> ties = {1.0f + 0x1p-11f, 1.0f + 0x1.8p-10f, -1.0f - 0x1p-11f, 0x1.8p-24f, 65520.0f};
  std::vector<std::uint16_t> nearest;
  nearest.reserve(ties.size());
  for (const float f : ties) nearest.push_back(ldmsim::float_to_half_bits(f));
  for (const int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    const int saved = std::fegetround();
    std::fesetround(mode);
    std::vector<std::uint16_t> got;
    std::vector<std::uint16_t> got_portable;
    for (const float f : ties) {
      got.push_back(ldmsim::float_to_half_bits(f));
      got_portable.push_back(ldmsim::float_to_half_bits_portable(f));
    }
    std::fesetround(saved);
    CHECK(got == nearest);
    CHECK(got_portable == nearest);
  }
}

TEST_CASE("fp16: bulk conversions match scalar for every tail length", "[fp16]") {
  std::mt19937 rng(1234);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible on purpose
  const std::vector<std::uint32_t> structured = structured_float_samples();
  for (std::size_t len = 0; len <= 37; ++len) {
    for (std::size_t offset = 0; offset < 3; ++offset) {  // also unaligned starts
      std::vector<float> in(offset + len);
      std::vector<f16> halves(offset + len + 4, f16::from_bits(0xabcdU));  // trailing sentinels
      for (float& f : in) f = float_of(structured[rng() % structured.size()]);
      ldmsim::floats_to_halves(std::span<const float>(in).subspan(offset), std::span<f16>(halves).subspan(offset, len));
      std::vector<float> back(offset + len + 4, 42.0f);
      ldmsim::halves_to_floats(std::span<const f16>(halves).subspan(offset, len),
                               std::span<float>(back).subspan(offset, len));
      std::size_t bad = 0;
      for (std::size_t i = offset; i < offset + len; ++i) {
        if (halves[i].bits != ldmsim::float_to_half_bits(in[i])) ++bad;
        if (halves[i].bits != ldmsim::float_to_half_bits_portable(in[i])) ++bad;
        if (bits_of(back[i]) != bits_of(ldmsim::half_bits_to_float(halves[i].bits))) ++bad;
        if (bits_of(back[i]) != bits_of(ldmsim::half_bits_to_float_portable(halves[i].bits))) ++bad;
      }
      std::size_t clobbered = 0;
      for (std::size_t i = 0; i < offset; ++i) clobbered += halves[i].bits != 0xabcdU || back[i] != 42.0f ? 1U : 0U;
      for (std::size_t i = offset + len; i < halves.size(); ++i) {
        clobbered += halves[i].bits != 0xabcdU || back[i] != 42.0f ? 1U : 0U;
      }
      INFO("len " << len << " offset " << offset);
      CHECK(bad == 0);
      CHECK(clobbered == 0);
    }
  }
}

TEST_CASE("fp16: raw fp32 bytes round to halves at any alignment and in place", "[fp16]") {
  // A model file's raw_data: floats at any byte offset, rounded into a buffer of their own or over themselves.
  std::mt19937 rng(4321);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible on purpose
  const std::vector<std::uint32_t> structured = structured_float_samples();
  for (const std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9},
                                std::size_t{31}, std::size_t{1000}, std::size_t{4099}}) {
    for (std::size_t offset = 0; offset < 4; ++offset) {
      std::vector<float> values(len);
      for (float& f : values) f = float_of(structured[rng() % structured.size()]);
      std::vector<unsigned char> bytes(offset + 4 * len + 8, 0xcdU);
      if (len > 0) std::memcpy(bytes.data() + offset, values.data(), 4 * len);
      // Apart, the halves land at another alignment than the floats: (offset + 1) % 4.
      const std::size_t to = (offset + 1) % 4;
      std::vector<unsigned char> apart(to + 2 * len + 8, 0xcdU);
      ldmsim::float_bytes_to_halves(bytes.data() + offset, len, apart.data() + to);
      std::vector<unsigned char> in_place = bytes;
      ldmsim::float_bytes_to_halves(in_place.data() + offset, len, in_place.data() + offset);
      std::size_t bad = 0, clobbered = 0;
      for (std::size_t i = 0; i < len; ++i) {
        std::uint16_t got = 0, got_in_place = 0;
        std::memcpy(&got, apart.data() + to + 2 * i, 2);
        std::memcpy(&got_in_place, in_place.data() + offset + 2 * i, 2);
        const std::uint16_t want = ldmsim::float_to_half_bits_portable(values[i]);
        bad += (got != want ? 1U : 0U) + (got_in_place != want ? 1U : 0U);
      }
      for (std::size_t i = 0; i < to; ++i) clobbered += apart[i] != 0xcdU ? 1U : 0U;
      for (std::size_t i = 0; i < offset; ++i) clobbered += in_place[i] != 0xcdU ? 1U : 0U;
      for (std::size_t i = to + 2 * len; i < apart.size(); ++i) clobbered += apart[i] != 0xcdU ? 1U : 0U;
      // In place, only the halves' bytes change: the rest of the floats' bytes are as they were.
      for (std::size_t i = offset + 2 * len; i < in_place.size(); ++i) clobbered += in_place[i] != bytes[i] ? 1U : 0U;
      INFO("len " << len << " offset " << offset);
      CHECK(bad == 0);
      CHECK(clobbered == 0);
    }
  }
}

TEST_CASE("fp16: F16C is used exactly when the CPU has it", "[fp16]") {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
#if defined(__clang__)
  // clang 14 has no "f16c" feature string: read CPUID.1:ECX bit 29.
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  const bool has_f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1U << 29)) != 0;
#else
  const bool has_f16c = __builtin_cpu_supports("f16c") != 0;
#endif
  const bool cpu = __builtin_cpu_supports("avx") && has_f16c;
  CHECK(ldmsim::f16c_available() == cpu);
#else
  CHECK_FALSE(ldmsim::f16c_available());
#endif
}

TEST_CASE("constants beyond fp16's range saturate to 65504 while infinities and NaN stay", "[sim][fp16]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float lowest = std::numeric_limits<float>::lowest();
  // Eleven values: a vector of eight and a tail of three, each path meeting every kind.
  const std::vector<float> in = {1e9f, -1e9f, 65504.0f, 65519.0f, 65520.0f, lowest, inf, -inf, nan, -65520.0f, 1.5f};
  const std::vector<float> want = {65504.0f, -65504.0f, 65504.0f, 65504.0f,  65504.0f, -65504.0f,
                                   inf,      -inf,      nan,      -65504.0f, 1.5f};
  const auto check = [&](const std::vector<f16>& got) {
    for (std::size_t i = 0; i < in.size(); ++i) {
      INFO(i << ": " << in[i]);
      if (std::isnan(want[i])) {
        CHECK(std::isnan(static_cast<float>(got[i])));
      } else {
        CHECK(static_cast<float>(got[i]) == want[i]);
      }
    }
  };
  std::vector<f16> out(in.size());
  CHECK(ldmsim::float_bytes_to_halves_saturated(in.data(), in.size(), out.data()) == 5);
  check(out);
  // In place, as a model's raw bytes are converted.
  std::vector<float> bytes = in;
  CHECK(ldmsim::float_bytes_to_halves_saturated(bytes.data(), bytes.size(), bytes.data()) == 5);
  std::vector<std::uint16_t> bits(in.size());
  std::memcpy(bits.data(), bytes.data(), bits.size() * sizeof(std::uint16_t));
  std::vector<f16> placed;
  for (const std::uint16_t b : bits) placed.push_back(f16::from_bits(b));
  check(placed);
  std::size_t one = 0;
  std::vector<f16> each;
  for (const float v : in) each.push_back(ldmsim::saturated_half(v, one));
  CHECK(one == 5);
  check(each);
  // Values in range round exactly as the plain conversion rounds them.
  std::vector<float> ordinary(1000);
  for (std::size_t i = 0; i < ordinary.size(); ++i) ordinary[i] = static_cast<float>(i) * 65.3f - 32000.0f;
  std::vector<f16> plain(ordinary.size()), saturated(ordinary.size());
  ldmsim::float_bytes_to_halves(ordinary.data(), ordinary.size(), plain.data());
  CHECK(ldmsim::float_bytes_to_halves_saturated(ordinary.data(), ordinary.size(), saturated.data()) == 0);
  CHECK(plain == saturated);
}
