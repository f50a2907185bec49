// erf_floats: the kernels' erf, the same bits on every host and the same bits as glibc's erff where its e^x is the
// FMA build (every x86-64 with FMA).
#include "ldmsim/kernels/erf_floats.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "float_bits.hpp"

using ldmsim::erf_floats;

using ldmsim::test::bits;
using ldmsim::test::host_has_fma;
using ldmsim::test::libc_erff_is_fdlibm;

TEST_CASE("erf_floats gives fixed bits in every branch of its approximation", "[kernels][erf]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(bits(ldmsim::erf_float(0.0f)) == bits(0.0f));
  CHECK(bits(ldmsim::erf_float(-0.0f)) == bits(-0.0f));
  CHECK(bits(ldmsim::erf_float(0x1p-130f)) == bits(0x1.20dd8p-130f));            // a subnormal: the scaled product
  CHECK(bits(ldmsim::erf_float(-0x1.a95a5cp-117f)) == bits(-0x1.dff59cp-117f));  // below 2^-28: x + efx x
  CHECK(bits(ldmsim::erf_float(0x1.b7cdfep-34f)) == bits(0x1.f04434p-34f));
  CHECK(bits(ldmsim::erf_float(0x1p-20f)) == bits(0x1.20dd74p-20f));  // the polynomial on [2^-28, 0.84375)
  CHECK(bits(ldmsim::erf_float(0.5f)) == bits(0x1.0a7ef6p-1f));
  CHECK(bits(ldmsim::erf_float(0.84375f)) == bits(0x1.88d1cep-1f));  // [0.84375, 1.25)
  CHECK(bits(ldmsim::erf_float(1.0f)) == bits(0x1.af767ap-1f));
  CHECK(bits(ldmsim::erf_float(-1.0f)) == bits(-0x1.af767ap-1f));
  CHECK(bits(ldmsim::erf_float(1.25f)) == bits(0x1.d8865ep-1f));  // the tail, first R/S
  CHECK(bits(ldmsim::erf_float(2.0f)) == bits(0x1.fd9ae2p-1f));
  CHECK(bits(ldmsim::erf_float(0x1.6db6dcp+1f)) == bits(0x1.fff904p-1f));  // the tail, second R/S
  CHECK(bits(ldmsim::erf_float(-3.5f)) == bits(-0x1.ffffe8p-1f));
  CHECK(ldmsim::erf_float(5.9f) == 1.0f);
  CHECK(ldmsim::erf_float(6.0f) == 1.0f);  // saturated
  CHECK(ldmsim::erf_float(-100.0f) == -1.0f);
  CHECK(ldmsim::erf_float(inf) == 1.0f);
  CHECK(ldmsim::erf_float(-inf) == -1.0f);
  const float nan = std::bit_cast<float>(0x7fc01234u);
  CHECK(bits(ldmsim::erf_float(nan)) == bits(nan));  // a NaN comes out as it went in
}

TEST_CASE("erf_floats in place and over runs that are not a multiple of its block", "[kernels][erf]") {
  std::vector<float> x;
  for (int i = 0; i < 1031; ++i) x.push_back(static_cast<float>(i % 97) * 0.09f - 4.3f);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  x[300] = -std::numeric_limits<float>::infinity();
  x[1030] = 1e-35f;
  std::vector<float> apart(x.size()), one_by_one(x.size());
  erf_floats(x.data(), apart.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) one_by_one[i] = ldmsim::erf_float(x[i]);
  std::vector<float> in_place = x;
  erf_floats(in_place.data(), in_place.data(), in_place.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO(i << ": erf " << x[i]);
    CHECK(bits(apart[i]) == bits(one_by_one[i]));
    CHECK(bits(in_place[i]) == bits(apart[i]));
  }
  CHECK(std::isnan(apart[5]));
  CHECK(apart[300] == -1.0f);
}

TEST_CASE("erf_floats matches std::erf bit for bit on a host with FMA", "[kernels][erf]") {
  if (!host_has_fma() || !libc_erff_is_fdlibm()) {
    WARN("no fdlibm erff with the FMA build of expf here: nothing to compare with bit for bit");
    return;
  }
  std::vector<float> x, y(1002);
  std::size_t mismatches = 0, checked = 0;
  const auto flush = [&] {
    erf_floats(x.data(), y.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) mismatches += bits(y[i]) != bits(std::erf(x[i]));
    checked += x.size();
    x.clear();
  };
  // Every 251st bit pattern (all exponents, both signs, NaNs and infinities); every pattern of |x| in [0.84375, 6),
  // the middle branch and the tail's two, where a coefficient's last bit shows on only a few inputs; and every 31st
  // of |x| in [2^-28, 0.84375). In runs of 1000: the vector loops and their tails.
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 251) {
    x.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(u)));
    if (x.size() == 1000) flush();
  }
  const auto both_signs = [&](std::uint32_t from, std::uint32_t to, std::uint32_t step) {
    for (std::uint32_t u = from; u < to; u += step) {
      x.push_back(std::bit_cast<float>(u));
      x.push_back(-std::bit_cast<float>(u));
      if (x.size() >= 1000) flush();
    }
  };
  both_signs(bits(0.84375f), bits(6.0f), 1);
  both_signs(bits(0x1p-28f), bits(0.84375f), 31);
  if (!x.empty()) flush();
  CHECK(checked > 78'000'000);
  CHECK(mismatches == 0);
}
