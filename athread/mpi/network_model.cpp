// The LogGP model's parameters from the environment, and its costs in cycles (network_model.hpp).
#include "network_model.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ldmsim::athread::mpi {
namespace {

/// The non-negative number in environment variable `name`, or `fallback` when it is unset or empty.
double number_from_env(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  const std::string value(text);
  double parsed = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc{} || end != value.data() + value.size() || !std::isfinite(parsed) || parsed < 0) {
    throw std::invalid_argument(std::string(name) + "=" + value + " is not a non-negative number");
  }
  return parsed;
}

}  // namespace

NetworkModel NetworkModel::from_environment(double clock_hz) {
  NetworkModel model;
  model.clock_hz = clock_hz;
  model.overhead_ns = number_from_env("LDMSIM_MPI_OVERHEAD_NS", model.overhead_ns);
  model.latency_ns = number_from_env("LDMSIM_MPI_LATENCY_NS", model.latency_ns);
  model.gap_ns = number_from_env("LDMSIM_MPI_GAP_NS", model.gap_ns);
  model.ns_per_byte = number_from_env("LDMSIM_MPI_NS_PER_BYTE", model.ns_per_byte);
  model.watchdog_seconds = number_from_env("LDMSIM_MPI_WATCHDOG_SECONDS", model.watchdog_seconds);
  if (const char* timing = std::getenv("LDMSIM_MPI_TIMING"); timing != nullptr && *timing != '\0') {
    const std::string value(timing);
    if (value != "on" && value != "off") {
      throw std::invalid_argument("LDMSIM_MPI_TIMING=" + value + " is neither on nor off");
    }
    model.timed = value == "on";
  }
  return model;
}

Cycle NetworkModel::cycles(double ns) const {
  return static_cast<Cycle>(std::ceil(ns * clock_hz / 1e9));
}

Cycle NetworkModel::send_busy(std::uint64_t bytes) const {
  const double per_byte = bytes > 0 ? static_cast<double>(bytes - 1) * ns_per_byte : 0.0;
  return cycles(overhead_ns + per_byte);
}

Cycle NetworkModel::transfer(std::uint64_t bytes) const {
  const double per_byte = bytes > 0 ? static_cast<double>(bytes - 1) * ns_per_byte : 0.0;
  return cycles(overhead_ns + per_byte + latency_ns + overhead_ns);
}

int tree_levels(int ranks) {
  int levels = 0;
  while ((1 << levels) < ranks) ++levels;
  return levels;
}

}  // namespace ldmsim::athread::mpi
