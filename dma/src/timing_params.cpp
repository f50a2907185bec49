// Parameter reading for timing models (see timing_params.hpp).
#include "timing_params.hpp"

#include <fmt/format.h>

#include <cmath>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim::detail {

double TimingParams::number(const std::string& key, double fallback, double min, bool strictly_greater) {
  known_.insert(key);
  if (!timing_.contains(key)) return fallback;
  const auto& value = timing_.at(key);
  if (!value.is_number()) throw ConfigError(fmt::format("dma.timing.{} must be a number (got {})", key, value.dump()));
  const double v = value.get<double>();
  if (!std::isfinite(v) || (strictly_greater ? !(v > min) : !(v >= min))) {
    throw ConfigError(fmt::format("dma.timing.{} must be {} {} (got {})", key, strictly_greater ? ">" : ">=", min, v));
  }
  return v;
}

void TimingParams::reject_unknown() const {
  for (const auto& [key, value] : timing_.items()) {
    if (!known_.contains(key)) {
      std::string names;
      for (const auto& k : known_) names += (names.empty() ? "" : ", ") + k;
      throw ConfigError(fmt::format("unknown key dma.timing.{} for model '{}' (known: {})", key,
                                    timing_.value("model", std::string{"?"}), names));
    }
  }
}

}  // namespace ldmsim::detail
