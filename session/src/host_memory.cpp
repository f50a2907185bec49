// The host-memory check of a run (session.hpp): its bound against what the host offers.
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <fstream>

#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/utf8.hpp"

namespace ldmsim {
namespace {

/// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::uint64_t host_memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace

void check_host_memory(std::uint64_t bytes, const std::string& what) {
  std::uint64_t limit = host_memory_available();
  std::string source = "available on this host (MemAvailable)";
  if (const char* given = std::getenv("LDMSIM_HOST_MEMORY_BYTES"); given != nullptr && *given != '\0') {
    const std::string text = given;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc{} || end != text.data() + text.size()) {
      throw ConfigError("LDMSIM_HOST_MEMORY_BYTES=" + valid_utf8(text) + " is not a byte count");
    }
    source = "allowed by LDMSIM_HOST_MEMORY_BYTES";
  }
  if (limit != 0 && bytes > limit) {
    throw ConfigError(
        fmt::format("{} needs up to {} of host memory for its tensors (simulated memory at its peak "
                    "plus host copies of its inputs and outputs), more than the {} {}",
                    what, bytes_text(static_cast<double>(bytes)), bytes_text(static_cast<double>(limit)), source));
  }
}

const char* version() {
  return LDMSIM_VERSION;
}

}  // namespace ldmsim
