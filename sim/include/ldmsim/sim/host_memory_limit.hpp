// How much host memory a command may count on before it allocates something large (a run's tensors, the parsed
// form of an ONNX model): LDMSIM_HOST_MEMORY_BYTES when set, else the kernel's MemAvailable (docs/user-guide.md,
// "Host memory").
#pragma once

#include <cstdint>
#include <string>

namespace ldmsim {

/// The host memory a command may take, and where the figure comes from (for its errors).
struct HostMemoryLimit {
  std::uint64_t bytes = 0;  ///< 0: unknown (no /proc/meminfo), no limit applies
  std::string source;       ///< "available on this host (MemAvailable)" or "allowed by LDMSIM_HOST_MEMORY_BYTES"
};

/// LDMSIM_HOST_MEMORY_BYTES when set and not empty (ConfigError when it is not a byte count), else MemAvailable of
/// /proc/meminfo.
HostMemoryLimit host_memory_limit();

}  // namespace ldmsim
