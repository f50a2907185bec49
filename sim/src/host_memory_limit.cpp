// The host memory a command may take (see host_memory_limit.hpp).
#include "ldmsim/sim/host_memory_limit.hpp"

#include <charconv>
#include <cstdlib>
#include <fstream>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/utf8.hpp"

namespace ldmsim {
namespace {

/// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::uint64_t mem_available() {
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

HostMemoryLimit host_memory_limit() {
  if (const char* given = std::getenv("LDMSIM_HOST_MEMORY_BYTES"); given != nullptr && *given != '\0') {
    const std::string text = given;
    std::uint64_t bytes = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
    if (ec != std::errc{} || end != text.data() + text.size()) {
      throw ConfigError("LDMSIM_HOST_MEMORY_BYTES=" + valid_utf8(text) + " is not a byte count");
    }
    return {bytes, "allowed by LDMSIM_HOST_MEMORY_BYTES"};
  }
  return {mem_available(), "available on this host (MemAvailable)"};
}

}  // namespace ldmsim
