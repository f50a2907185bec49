// Host memory as main memory: athread programs pass host pointers as DMA main-memory addresses. Each readable
// host mapping gets a mirror region in the simulated main memory; a get copies its main-memory bytes from the
// host into the mirror just before the request runs, a put copies its blocks back right after. The host
// memory stays the truth, and the DMA engine still validates and times every request.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::athread {

class HostMirror {
 public:
  /// Re-reads /proc/self/maps and (re)creates mirror regions; call on the control core between launches.
  void refresh(MainMemory& memory);
  /// The device address mirroring host address `host`, or nullopt when no readable mapping holds it.
  std::optional<DeviceAddr> to_device(std::uintptr_t host) const;
  /// The host address a mirror device address stands for, or nullopt when it mirrors nothing.
  std::optional<std::uintptr_t> to_host(DeviceAddr device) const;
  /// Whether [host, host + bytes) lies in one writable mapping.
  bool writable(std::uintptr_t host, std::uint64_t bytes) const;
  /// Copies the host bytes a get will read (request.main is a device address from to_device) into the mirror.
  void before_get(MainMemory& memory, const DmaRequest& request) const;
  /// Copies the blocks a put wrote in the mirror back to host memory.
  void after_put(const MainMemory& memory, const DmaRequest& request) const;

 private:
  struct Mapping {
    std::uintptr_t lo;
    std::uintptr_t hi;
    bool writable;
    DeviceAddr device;
  };
  const Mapping* by_host(std::uintptr_t host) const;
  const Mapping* by_device(DeviceAddr device) const;
  std::vector<Mapping> mappings_;  // sorted by lo (and so by device)
};

}  // namespace ldmsim::athread
