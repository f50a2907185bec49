// Reads a timing model's parameters from dma.timing with defaults, checking types, ranges and unknown keys;
// every error names the JSON path (dma.timing.<key>).
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace ldmsim::detail {

class TimingParams {
 public:
  explicit TimingParams(const nlohmann::json& timing) : timing_(timing) {}
  /// A number >= min (or > min when strictly_greater); `fallback` when absent.
  double number(const std::string& key, double fallback, double min, bool strictly_greater = false);
  /// Throws ConfigError if a key other than "model" and the ones read so far is present.
  void reject_unknown() const;

 private:
  const nlohmann::json& timing_;
  std::set<std::string> known_{"model"};
};

}  // namespace ldmsim::detail
