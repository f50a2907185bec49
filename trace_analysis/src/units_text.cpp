// Human-readable quantities (see units_text.hpp).
#include "ldmsim/trace_analysis/units_text.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace ldmsim {

namespace {

/// `value` scaled by 1000s along `prefixes` (prefixes[first] is the unscaled one) until it is below 1000, or
/// up to 1 from below, printed with 4 significant digits.
template <std::size_t N>
std::string scaled(double value, const std::array<const char*, N>& prefixes, std::size_t first, const char* unit) {
  if (value == 0 || !std::isfinite(value)) return fmt::format("{:g} {}{}", value, prefixes[first], unit);
  std::size_t at = first;
  double shown = value;
  while (std::abs(shown) < 1.0 && at > 0) shown *= 1000.0, --at;
  while (std::abs(shown) >= 999.95 && at + 1 < N) shown /= 1000.0, ++at;
  // Past the largest prefix, whole numbers (an exponent is what this helper avoids); trailing zeros stay out.
  if (std::abs(shown) >= 9999.5) return fmt::format("{:.0f} {}{}", shown, prefixes[at], unit);
  return fmt::format("{:.4g} {}{}", shown, prefixes[at], unit);
}

}  // namespace

std::string seconds_text(double seconds) {
  static constexpr std::array<const char*, 5> kPrefixes = {"p", "n", "u", "m", ""};
  return scaled(seconds, kPrefixes, 4, "s");
}

std::string rate_text(double per_second, const char* unit) {
  static constexpr std::array<const char*, 6> kPrefixes = {"", "k", "M", "G", "T", "P"};
  return scaled(per_second, kPrefixes, 0, unit);
}

}  // namespace ldmsim
