// Output activations of conv and gemm (see activation.hpp).
#include "activation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <span>

#include "ldmsim/sim/fp16.hpp"
#include "op_support.hpp"

namespace ldmsim::ops {

void round_to_fp16(float* values, std::size_t n) {
  constexpr std::size_t kChunk = 256;
  std::array<f16, kChunk> halves;
  for (std::size_t at = 0; at < n; at += kChunk) {
    const std::size_t count = std::min(kChunk, n - at);
    floats_to_halves(std::span<const float>(values + at, count), std::span<f16>(halves.data(), count));
    halves_to_floats(std::span<const f16>(halves.data(), count), std::span<float>(values + at, count));
  }
}

ClipBounds ClipBounds::parse(std::string_view op, const JsonField& attrs) {
  const double lo = std::max(num_attr(attrs, "min", -65504.0), -65504.0);
  const double hi = std::min(num_attr(attrs, "max", 65504.0), 65504.0);
  if (lo > hi) reject(op, fmt::format("min {} is above max {}", lo, hi));
  return {static_cast<float>(lo), static_cast<float>(hi)};
}

Activation Activation::parse(std::string_view op, const JsonField& attrs) {
  const auto field = attrs.find("activation");
  if (!field) return {};
  const bool object = field->json().is_object();
  if (!object && !field->json().is_string()) field->fail("must be \"relu\" or an object with a \"type\"");
  const std::string type = object ? field->at("type").string() : field->string();
  Activation a;
  if (type == "relu") {
    if (object) field->expect_object({"type"});
    a.kind = Kind::kRelu;
  } else if (type == "clip") {
    if (!object) field->fail("clip needs an object: {\"type\": \"clip\", \"min\": A, \"max\": B}");
    field->expect_object({"type", "min", "max"});
    a.kind = Kind::kClip;
    a.bounds = ClipBounds::parse(op, *field);
  } else {
    (object ? field->at("type") : *field).fail(fmt::format("type must be \"relu\" or \"clip\" (got \"{}\")", type));
  }
  return a;
}

void Activation::apply_before_rounding(float* values, std::size_t n) const {
  switch (kind) {
    case Kind::kNone:
      return;
    case Kind::kRelu:
      for (std::size_t i = 0; i < n; ++i) values[i] = relu_value(values[i]);
      return;
    case Kind::kClip:
      // Clipped after rounding: a tiny negative rounds to -0, which clip keeps (-0 is not below a bound of +0).
      round_to_fp16(values, n);
      for (std::size_t i = 0; i < n; ++i) values[i] = clip_value(values[i], bounds.lo, bounds.hi);
      return;
  }
}

double Activation::reference(double v) const {
  switch (kind) {
    case Kind::kNone:
      return v;
    case Kind::kRelu:
      return std::max(v, 0.0);  // NaN stays NaN, as in relu's own reference
    case Kind::kClip:
      return std::min(std::max(v, static_cast<double>(bounds.lo)), static_cast<double>(bounds.hi));
  }
  return v;
}

std::uint32_t Activation::ops() const {
  switch (kind) {
    case Kind::kNone:
      return 0;
    case Kind::kRelu:
      return 1;  // a max with zero
    case Kind::kClip:
      return 2;  // a max and a min
  }
  return 0;
}

void Activation::describe(std::vector<std::uint64_t>& key) const {
  key.insert(key.end(), {static_cast<std::uint64_t>(kind), std::bit_cast<std::uint32_t>(bounds.lo),
                         std::bit_cast<std::uint32_t>(bounds.hi)});
}

nlohmann::json Activation::to_json() const {
  switch (kind) {
    case Kind::kNone:
      return nullptr;
    case Kind::kRelu:
      return {{"type", "relu"}};
    case Kind::kClip:
      return {{"type", "clip"}, {"min", bounds.lo}, {"max", bounds.hi}};
  }
  return nullptr;
}

}  // namespace ldmsim::ops
