// Reads a timing model's parameters from dma.timing with defaults, through the checked-JSON helper: types and
// ranges checked, unknown keys refused with a did-you-mean, every error naming the JSON path (dma.timing.<key>).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "ldmsim/sim/json_checked.hpp"

namespace ldmsim::detail {

class TimingParams {
 public:
  explicit TimingParams(const nlohmann::json& timing) : field_(timing, "", "dma.timing") {}
  /// Largest value of any timing parameter: cycle counts beyond it would overflow the simulated clock.
  static constexpr double kMaxValue = 1e9;
  /// Smallest bytes_per_cycle: a slower engine would take more than 2^53 cycles for one large request.
  static constexpr double kMinBytesPerCycle = 1.0 / 4096;

  /// A number >= min (or > min when strictly_greater) and <= kMaxValue; `fallback` when absent.
  double number(std::string_view key, double fallback, double min, bool strictly_greater = false);
  /// A bandwidth in bytes per cycle: > 0, at least kMinBytesPerCycle and at most kMaxValue.
  double bytes_per_cycle(std::string_view key, double fallback);
  /// An integer in [lo, hi]; `fallback` when absent.
  std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t lo, std::int64_t hi);
  /// Throws ConfigError if a key other than "model" and the ones read so far is present.
  void reject_unknown() const;

 private:
  JsonField field_;
  std::vector<std::string_view> known_{"model"};
};

}  // namespace ldmsim::detail
