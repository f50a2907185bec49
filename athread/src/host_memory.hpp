// Host memory as main memory: athread programs pass host pointers as DMA main-memory addresses. Each readable
// host mapping a DMA request touches gets a mirror region in the simulated main memory, allocated at its first use
// (so the mirrors' addresses follow the program's own order of use, not the order or number of the process's other
// mappings, which MPI libraries vary from run to run; with stable addresses, not even on where in its mapping the
// first object used lies); a get copies its main-memory bytes from the host into the
// mirror just before the request runs, a put copies its blocks back right after. The host memory stays the truth,
// and the DMA engine still validates and times every request.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::athread {

class HostMirror {
 public:
  /// Re-reads /proc/self/maps, keeps the mirrors of mappings that did not change (with stable addresses, also of those
  /// that grew or shrank around the mirror's anchor within its region, as a heap does) and frees the others; call on
  /// the control core between launches.
  void refresh(MainMemory& memory);
  /// The device address mirroring host address `host` (its mapping's mirror allocated now if this is the mapping's
  /// first use), or nullopt when no readable mapping holds it.
  std::optional<DeviceAddr> to_device(std::uintptr_t host, MainMemory& memory);
  /// MPI mode: each mirror is placed so that the first address its mapping is used at (rounded down to 16 bytes, which
  /// keeps DMA alignment) gets the same device address in every run, whatever the mapping's start and size, which
  /// other libraries' allocations vary. The mirror then reserves twice its mapping's size rounded up to a power of two.
  void set_stable_addresses(bool stable) { stable_ = stable; }
  bool stable_addresses() const { return stable_; }
  /// Whether [host, host + bytes) lies in one readable mapping.
  bool within(std::uintptr_t host, std::uint64_t bytes) const;
  /// Whether a readable mapping holds `host`.
  bool mapped(std::uintptr_t host) const { return by_host(host) != nullptr; }
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
    std::optional<DeviceAddr> device;  // the device address of lo; nullopt: not used by a DMA request yet
    DeviceAddr region = 0;             // the mirror's region (from below `device` to past hi, when stable)
    std::uint64_t region_bytes = 0;
    std::uintptr_t anchor = 0;  // the host address the mirror was placed by
  };
  /// The old mirror that still holds `r` around its anchor (a mapping that grew or shrank), or nullptr.
  Mapping* holding(std::uintptr_t lo, std::uintptr_t hi, bool writable);
  /// Allocates the mirror of `m`, first used at `host`.
  void mirror(Mapping& m, std::uintptr_t host, MainMemory& memory);
  const Mapping* by_host(std::uintptr_t host) const;
  const Mapping* by_device(DeviceAddr device) const;
  std::vector<Mapping> mappings_;  // sorted by lo
  bool stable_ = false;
};

}  // namespace ldmsim::athread
