// The host-memory check of a run (session.hpp): its bound against what the host offers.
#include <fmt/format.h>

#include "ldmsim/session/session.hpp"
#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_memory_limit.hpp"

namespace ldmsim {

void check_host_memory(std::uint64_t bytes, const std::string& what) {
  const HostMemoryLimit limit = host_memory_limit();
  if (limit.bytes != 0 && bytes > limit.bytes) {
    throw ConfigError(fmt::format(
        "{} needs up to {} of host memory for its tensors (simulated memory at its peak "
        "plus host copies of its inputs and outputs), more than the {} {}",
        what, bytes_text(static_cast<double>(bytes)), bytes_text(static_cast<double>(limit.bytes)), limit.source));
  }
}

const char* version() {
  return LDMSIM_VERSION;
}

}  // namespace ldmsim
