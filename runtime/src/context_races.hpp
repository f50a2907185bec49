// Races between models run at the same time on one node (ConcurrentMachine, pipelined; docs/checking.md): the
// contexts' programs share main memory and no barrier, so any two requests of different contexts that overlap in
// main memory, at least one a put, race whatever their times. Each context's requests so far are kept as merged
// main-memory ranges (reads and writes, per allocation), each with the first request that touched it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::detail {

class GroupCheck;

class ContextRaces {
 public:
  /// After a launch of context `context` (named `label`) in which `groups` checked races: reports each of its
  /// requests that overlaps another context's earlier request with at least one put (to the launch's group), then
  /// adds them to the context's record. On the node's one pipelined thread, in launch join order.
  void add_launch(std::uint32_t context, const std::string& label, const std::vector<GroupCheck*>& groups,
                  const MainMemory& memory);
  /// Main memory [lo, hi) was freed: a later allocation there is another buffer, ordered after every request made
  /// so far on this one (by the allocator on the control cores).
  void forget(DeviceAddr lo, DeviceAddr hi);

 private:
  /// The first request that touched a range, enough to describe it in a report.
  struct Origin {
    std::uint32_t kernel = 0;  // index into Record::kernels
    int cg = 0;
    int core = 0;
    Cycle issue = 0;
    DmaRequest request;
  };
  struct Range {
    DeviceAddr hi = 0;
    DeviceAddr region = 0;  // base of the allocation it lies in (ranges merge only within one)
    Origin origin;
  };
  struct Record {
    std::string label;
    std::vector<std::string> kernels;
    std::map<DeviceAddr, Range> reads;   // by lo
    std::map<DeviceAddr, Range> writes;  // by lo
  };
  static void insert(std::map<DeviceAddr, Range>& ranges, DeviceAddr lo, DeviceAddr hi, DeviceAddr region,
                     const Origin& origin);
  /// The first range of `ranges` meeting [lo, hi), or null.
  static const Range* meet(const std::map<DeviceAddr, Range>& ranges, DeviceAddr lo, DeviceAddr hi, DeviceAddr* at);
  std::string describe(const Record& record, const Origin& origin, const MainMemory& memory) const;

  std::map<std::uint32_t, Record> contexts_;
};

}  // namespace ldmsim::detail
