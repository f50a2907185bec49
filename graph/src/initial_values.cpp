// Graph inputs' initial values (deterministic from the seed).
#include <algorithm>
#include <random>
#include <span>

#include "ldmsim/graph/executor.hpp"

namespace ldmsim {

std::vector<f16> initial_values(const TensorNode& t) {
  const std::size_t n = t.shape.elements();
  if (t.init.kind == TensorInit::Kind::kData) {  // a model's weights: converted where they are, not copied first
    std::vector<f16> h(n);
    const std::size_t given = std::min(n, t.init.data.size());
    floats_to_halves(std::span<const float>(t.init.data.data(), given), std::span<f16>(h.data(), given));
    return h;
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
  return h;
}

}  // namespace ldmsim
