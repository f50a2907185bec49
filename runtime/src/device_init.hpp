// Which bytes of a machine's allocations were written since they were allocated: the init check for device memory
// (docs/checking.md). Allocations made through Machine::alloc while the init check is on are tracked, one bit per
// byte; host writes and uploads (staging) mark bytes on the control core, DMA puts at the join of the launch that
// made them. Untracked memory (allocated before the check was on, athread host mappings) counts as written.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim::detail {

/// Half-open main-memory ranges, kept sorted and merged.
class RangeSet {
 public:
  void add(DeviceAddr lo, DeviceAddr hi);
  /// The parts of [lo, hi) not in the set, appended to `out`.
  void subtract_from(DeviceAddr lo, DeviceAddr hi, std::vector<std::pair<DeviceAddr, DeviceAddr>>& out) const;
  bool empty() const { return ranges_.empty(); }
  const std::map<DeviceAddr, DeviceAddr>& ranges() const { return ranges_; }
  void clear() { ranges_.clear(); }

 private:
  std::map<DeviceAddr, DeviceAddr> ranges_;  // lo -> hi, disjoint and not touching
};

/// The written bytes of the tracked allocations. Changed only on the control core (no launch running); read by the
/// groups' threads during a launch.
class DeviceInit {
 public:
  void on_alloc(DeviceAddr base, std::uint64_t bytes);
  void on_free(DeviceAddr base);
  void forget_all() { allocs_.clear(); }
  void mark(DeviceAddr lo, DeviceAddr hi);
  /// The parts of [lo, hi) inside tracked allocations that were not written, appended to `out`.
  void unwritten(DeviceAddr lo, DeviceAddr hi, std::vector<std::pair<DeviceAddr, DeviceAddr>>& out) const;
  bool tracking() const { return !allocs_.empty(); }

 private:
  struct Alloc {
    std::uint64_t bytes = 0;
    std::vector<std::uint64_t> bits;  // bit i: byte base + i was written
  };
  std::map<DeviceAddr, Alloc> allocs_;  // by base
};

}  // namespace ldmsim::detail
