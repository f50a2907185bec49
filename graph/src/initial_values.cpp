// Graph inputs' initial values (deterministic from the seed).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <stdexcept>

#include "ldmsim/graph/executor.hpp"

namespace ldmsim {

namespace {

/// An int32 or bool input's values: a value, or integers uniform in [ceil(a), ceil(b) - 1] (bool: a coin).
SharedHalves typed_initial_values(const TensorNode& t) {
  std::vector<std::int32_t> words(t.shape.elements());
  std::mt19937_64 rng(t.init.seed);
  switch (t.init.kind) {
    case TensorInit::Kind::kValue:
      std::fill(words.begin(), words.end(), static_cast<std::int32_t>(t.init.a));
      break;
    case TensorInit::Kind::kUniform: {
      const auto low = static_cast<std::int64_t>(std::ceil(t.init.a));
      const auto high = std::max(low, static_cast<std::int64_t>(std::ceil(t.init.b)) - 1);
      std::uniform_int_distribution<std::int64_t> d(low, high);
      for (auto& w : words) w = static_cast<std::int32_t>(d(rng));
      break;
    }
    case TensorInit::Kind::kNormal:
      throw std::logic_error(fmt::format("tensor '{}' is {}: normal values do not apply", t.name, to_string(t.dtype)));
    case TensorInit::Kind::kData:
    case TensorInit::Kind::kProduced:
      break;
  }
  if (t.dtype == DType::kBool) {
    for (auto& w : words) w = w != 0 ? 1 : 0;
  }
  return SharedHalves(words_to_units(words));
}

}  // namespace

SharedHalves initial_values(const TensorNode& t) {
  const std::size_t n = t.shape.elements();
  if (t.init.kind == TensorInit::Kind::kData) {  // a model's weights: used where they are, not copied
    if (t.init.data.size() == n * units_of(t.dtype)) return t.init.data;
    throw std::logic_error(
        fmt::format("tensor '{}' holds {} units for shape {}", t.name, t.init.data.size(), t.shape.str()));
  }
  if (t.dtype != DType::kF16) return typed_initial_values(t);
  std::vector<float> v(n);
  std::mt19937_64 rng(t.init.seed);
  switch (t.init.kind) {
    case TensorInit::Kind::kUniform: {
      std::uniform_real_distribution<float> d(static_cast<float>(t.init.a), static_cast<float>(t.init.b));
      for (auto& x : v) x = d(rng);
      break;
    }
    case TensorInit::Kind::kNormal: {
      std::normal_distribution<float> d(static_cast<float>(t.init.a), static_cast<float>(t.init.b));
      for (auto& x : v) x = d(rng);
      break;
    }
    case TensorInit::Kind::kValue:
      std::fill(v.begin(), v.end(), static_cast<float>(t.init.a));
      break;
    case TensorInit::Kind::kData:  // handled above
    case TensorInit::Kind::kProduced:
      break;
  }
  std::vector<f16> h(n);
  floats_to_halves(v, h);
  return SharedHalves(std::move(h));
}

}  // namespace ldmsim
