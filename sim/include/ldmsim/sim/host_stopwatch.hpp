// Host (wall-clock) time for host_times.json and staging statistics: never part of simulated results.
#pragma once

#include <chrono>

namespace ldmsim {

/// Seconds since it started, or since the previous lap.
class HostStopwatch {
 public:
  /// Seconds since the start or the previous lap; the next lap starts now.
  double lap() {
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }
  /// Seconds since the start or the previous lap, without starting a new one.
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - last_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_ = Clock::now();
};

}  // namespace ldmsim
