// exp_floats: the kernels' e^x, the same bits on every host and the same bits as glibc's expf where that is its
// FMA build (every x86-64 with FMA).
#include "ldmsim/kernels/exp_floats.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "float_bits.hpp"

using ldmsim::exp_floats;

using ldmsim::test::bits;
using ldmsim::test::host_has_fma;

TEST_CASE("exp_floats gives fixed bits at known points and at the edges of its range", "[kernels][exp]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(ldmsim::exp_float(0.0f) == 1.0f);
  CHECK(ldmsim::exp_float(-0.0f) == 1.0f);
  CHECK(bits(ldmsim::exp_float(1.0f)) == bits(0x1.5bf0a8p+1f));
  // Inputs where glibc's build without FMA rounds the other way: these pin the fused arithmetic on every host.
  CHECK(bits(ldmsim::exp_float(0x1.04845ep+5f)) == bits(0x1.f93e38p+46f));
  CHECK(bits(ldmsim::exp_float(-0x1.f8cbb2p+5f)) == bits(0x1.f45326p-92f));
  std::vector<float> run(9, 0x1.04845ep+5f), out(9);  // the same through the vector loop and its tail
  for (std::size_t i = 1; i < run.size(); i += 2) run[i] = -0x1.f8cbb2p+5f;
  exp_floats(run.data(), out.data(), run.size());
  for (std::size_t i = 0; i < run.size(); ++i) {
    INFO(i);
    CHECK(bits(out[i]) == bits(i % 2 == 0 ? 0x1.f93e38p+46f : 0x1.f45326p-92f));
  }
  CHECK(ldmsim::exp_float(inf) == inf);
  CHECK(ldmsim::exp_float(-inf) == 0.0f);
  CHECK(ldmsim::exp_float(89.0f) == inf);     // above log(2^128)
  CHECK(ldmsim::exp_float(-104.0f) == 0.0f);  // below log(2^-150)
  CHECK(ldmsim::exp_float(88.7f) < inf);
  CHECK(ldmsim::exp_float(-103.9f) > 0.0f);  // a subnormal
  CHECK(std::isnan(ldmsim::exp_float(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("exp_floats in place and over runs that are not a multiple of the vector width or its block",
          "[kernels][exp]") {
  std::vector<float> x;
  for (int i = 0; i < 1031; ++i) x.push_back(static_cast<float>(i % 97) * 0.37f - 17.0f);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  x[300] = 120.0f;
  x[1030] = -200.0f;
  std::vector<float> apart(x.size()), one_by_one(x.size());
  exp_floats(x.data(), apart.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) one_by_one[i] = ldmsim::exp_float(x[i]);
  std::vector<float> in_place = x;
  exp_floats(in_place.data(), in_place.data(), in_place.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO(i << ": e^" << x[i]);
    CHECK(bits(apart[i]) == bits(one_by_one[i]));
    CHECK(bits(in_place[i]) == bits(apart[i]));
  }
  CHECK(std::isnan(apart[5]));
  CHECK(apart[300] == std::numeric_limits<float>::infinity());
  CHECK(apart[1030] == 0.0f);
}

TEST_CASE("exp_floats matches std::exp bit for bit on a host with FMA", "[kernels][exp]") {
  if (!host_has_fma()) {
    WARN("this host has no FMA: glibc's expf is its other build here, so there is nothing to compare with");
    return;
  }
  // Every 251st bit pattern: all exponents, both signs, NaNs and infinities, in runs of 1000 (the vector path and
  // its tail).
  std::vector<float> x, y(1000);
  std::size_t mismatches = 0, checked = 0;
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 251) {
    x.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(u)));
    if (x.size() < 1000) continue;
    exp_floats(x.data(), y.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) mismatches += bits(y[i]) != bits(std::exp(x[i]));
    checked += x.size();
    x.clear();
  }
  CHECK(checked > 17'000'000);
  CHECK(mismatches == 0);
}
