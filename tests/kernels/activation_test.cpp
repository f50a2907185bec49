// The output activation of conv and gemm (kernels/src/ops/activation.hpp): applied before the one fp16 rounding, it
// must give the bits the relu and clip kernels give on the rounded value, for every kind of value; and its attribute
// is checked like any other.
#include "../../kernels/src/ops/activation.hpp"  // white box: the epilogue's order of rounding

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/fp16.hpp"

using namespace ldmsim;
using ops::Activation;

namespace {

/// Floats that probe the rounding: every fp16 value, the midpoints between neighbours (ties) and values just
/// beside them, values beyond fp16's range, zeros, infinities, NaNs, and random floats of every magnitude.
std::vector<float> probe_values() {
  std::vector<float> v;
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float h = static_cast<float>(f16::from_bits(static_cast<std::uint16_t>(bits)));
    if (std::isnan(h)) continue;
    v.push_back(h);
    const float next = static_cast<float>(f16::from_bits(static_cast<std::uint16_t>(bits + 1)));
    if (bits < 0xffff && std::isfinite(next) && std::isfinite(h) && (bits & 0x7fff) != 0x7bff) {
      const float mid = h + (next - h) / 2;
      v.insert(v.end(), {mid, std::nextafter(mid, h), std::nextafter(mid, next)});
    }
  }
  v.insert(v.end(), {65504.0f, 65519.0f, 65520.0f, 70000.0f, -65520.0f, 1e30f, -1e30f, 0.0f, -0.0f,
                     std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                     std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()});
  std::uint32_t nan_bits = 0x7fa00001;  // a signalling NaN with a payload
  float nan;
  std::memcpy(&nan, &nan_bits, sizeof nan);
  v.push_back(nan);
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    float f;
    std::memcpy(&f, &bits, sizeof f);
    v.push_back(f);
  }
  return v;
}

std::vector<std::uint16_t> bits_of(const std::vector<f16>& h) {
  std::vector<std::uint16_t> b;
  for (const f16 x : h) b.push_back(x.bits);
  return b;
}

/// The activation's bits both ways: the epilogue (activate, round) and the ops apart (round, activate, round).
void check_orders_agree(const Activation& a, const std::vector<float>& values) {
  std::vector<float> fused = values;
  a.apply_before_rounding(fused.data(), fused.size());
  std::vector<f16> fused_halves(values.size());
  floats_to_halves(fused, fused_halves);

  std::vector<f16> rounded(values.size());
  floats_to_halves(values, rounded);
  std::vector<float> apart(values.size());
  halves_to_floats(rounded, apart);
  a.apply_before_rounding(apart.data(), apart.size());  // the relu and clip kernels' arithmetic
  std::vector<f16> apart_halves(values.size());
  floats_to_halves(apart, apart_halves);

  const auto f = bits_of(fused_halves), s = bits_of(apart_halves);
  std::size_t differ = 0, first = values.size();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (f[i] != s[i] && differ++ == 0) first = i;
  }
  CAPTURE(first < values.size() ? values[first] : 0.0f);
  CHECK(differ == 0);
}

Activation parse(const nlohmann::json& attrs) {
  return Activation::parse("op", JsonField(attrs, "test"));
}

}  // namespace

TEST_CASE("activating before the one rounding gives the bits of rounding, activating and rounding again") {
  const std::vector<float> values = probe_values();
  SECTION("relu") {
    check_orders_agree(parse({{"activation", "relu"}}), values);
  }
  SECTION("ReLU6: bounds that are fp16 values") {
    check_orders_agree(parse({{"activation", {{"type", "clip"}, {"min", 0}, {"max", 6}}}}), values);
  }
  SECTION("bounds between fp16 values, and one bound only") {
    check_orders_agree(parse({{"activation", {{"type", "clip"}, {"min", -0.1}, {"max", 0.30001}}}}), values);
    check_orders_agree(parse({{"activation", {{"type", "clip"}, {"min", 1.00049}}}}), values);
    check_orders_agree(parse({{"activation", {{"type", "clip"}, {"max", -2.0e-7}}}}), values);
  }
  SECTION("bounds beyond fp16's range are its largest finite values") {
    const Activation a = parse({{"activation", {{"type", "clip"}, {"min", -1e9}, {"max", 1e9}}}});
    CHECK(a.bounds.lo == -65504.0f);
    CHECK(a.bounds.hi == 65504.0f);
    check_orders_agree(a, values);
  }
}

TEST_CASE("relu gives +0 for negatives, zeros of both signs and NaN, and clip keeps NaN") {
  const Activation relu = parse({{"activation", {{"type", "relu"}}}});
  std::vector<float> v{-3.0f, -0.0f, 0.0f, std::numeric_limits<float>::quiet_NaN(), 2.5f};
  relu.apply_before_rounding(v.data(), v.size());
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(v[i] == 0.0f);
    CHECK(!std::signbit(v[i]));
  }
  CHECK(v[4] == 2.5f);
  const Activation clip = parse({{"activation", {{"type", "clip"}, {"min", 0}, {"max", 6}}}});
  std::vector<float> c{-1.0f, 7.0f, 3.0f, std::numeric_limits<float>::quiet_NaN()};
  clip.apply_before_rounding(c.data(), c.size());
  CHECK(c[0] == 0.0f);
  CHECK(c[1] == 6.0f);
  CHECK(c[2] == 3.0f);
  CHECK(std::isnan(c[3]));
  CHECK(relu.ops() == 1);
  CHECK(clip.ops() == 2);
  CHECK(!parse(nlohmann::json::object()));
  CHECK(!parse(nullptr));
}

TEST_CASE("a bad activation attribute is a ConfigError naming it and the value") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(parse({{"activation", "gelu"}}), Contains("activation") && Contains("gelu"));
  CHECK_THROWS_WITH(parse({{"activation", {{"type", "sigmoid"}}}}), Contains("activation.type") && Contains("sigmoid"));
  CHECK_THROWS_WITH(parse({{"activation", 3}}), Contains("activation") && Contains("relu"));
  CHECK_THROWS_WITH(parse({{"activation", "clip"}}), Contains("clip needs an object"));
  CHECK_THROWS_WITH(parse({{"activation", {{"min", 0}}}}), Contains("activation.type"));
  CHECK_THROWS_WITH(parse({{"activation", {{"type", "clip"}, {"min", 2}, {"max", 1}}}}),
                    Contains("op") && Contains("min 2 is above max 1"));
  CHECK_THROWS_WITH(parse({{"activation", {{"type", "relu"}, {"max", 1}}}}), Contains("max"));
  CHECK_THROWS_WITH(parse({{"activation", {{"type", "clip"}, {"mx", 1}}}}), Contains("mx"));
  CHECK_THROWS_AS(parse({{"activation", "gelu"}}), ConfigError);
}
