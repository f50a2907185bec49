// Human-readable byte counts (see bytes_text.hpp).
#include "ldmsim/sim/bytes_text.hpp"

#include <fmt/format.h>

#include <iterator>

namespace ldmsim {

std::string bytes_text(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.4g} {}", bytes, kUnits[unit]);
}

}  // namespace ldmsim
