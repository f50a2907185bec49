// Parameter reading for timing models (see timing_params.hpp).
#include "timing_params.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim::detail {

double TimingParams::number(std::string_view key, double fallback, double min, bool strictly_greater) {
  known_.push_back(key);
  const auto value = field_.find(key);
  if (!value) return fallback;
  if (!value->json().is_number()) value->fail("must be a number");
  const double v = value->json().get<double>();
  if (!std::isfinite(v) || (strictly_greater ? !(v > min) : !(v >= min))) {
    value->fail(fmt::format("must be {} {}", strictly_greater ? ">" : ">=", min));
  }
  if (v > kMaxValue) value->fail(fmt::format("must be at most {:g}", kMaxValue));
  return v;
}

double TimingParams::bytes_per_cycle(std::string_view key, double fallback) {
  const double v = number(key, fallback, 0, /*strictly_greater=*/true);
  if (v < kMinBytesPerCycle) {
    field_.find(key)->fail(
        fmt::format("must be at least {:g}: a slower engine would overflow the cycle counts", kMinBytesPerCycle));
  }
  return v;
}

std::int64_t TimingParams::integer(std::string_view key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  known_.push_back(key);
  const auto value = field_.find(key);
  return value ? value->integer(lo, hi) : fallback;
}

void TimingParams::reject_unknown() const {
  try {
    field_.expect_object(known_);
  } catch (const ConfigError& e) {
    // The allowed keys depend on the model: say which one.
    throw ConfigError(
        fmt::format("{}, for timing model '{}'", e.what(), field_.json().value("model", std::string{"?"})));
  }
}

}  // namespace ldmsim::detail
