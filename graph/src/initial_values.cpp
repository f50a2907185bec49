// Graph inputs' initial values (deterministic from the seed).
#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <span>
#include <stdexcept>

#include "ldmsim/graph/executor.hpp"

namespace ldmsim {

SharedHalves initial_values(const TensorNode& t) {
  const std::size_t n = t.shape.elements();
  if (t.init.kind == TensorInit::Kind::kData) {  // a model's weights: used where they are, not copied
    if (t.init.data.size() == n) return t.init.data;
    throw std::logic_error(
        fmt::format("tensor '{}' holds {} values for shape {}", t.name, t.init.data.size(), t.shape.str()));
  }
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
