// Races between launches of programs that share main memory and no barrier (docs/checking.md): models run at the
// same time on one node (ConcurrentMachine, pipelined), and athread spawns of different host threads. Any two
// requests of different contexts (models, host threads) that overlap in main memory, at least one a put, race
// whatever their times. Each context's requests so far are kept as merged main-memory ranges (reads and writes, per
// allocation), each with the first request that touched it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::detail {

class GroupCheck;

class ContextRaces {
 public:
  /// `why`: the reason such a pair races, for the reports ("models run at the same time share no barrier").
  explicit ContextRaces(std::string why) : why_(std::move(why)) {}
  /// After a launch of context `context` (named `label` in reports: "model NAME", "host thread N") in which `groups`
  /// checked races: reports each of its requests that overlaps another context's earlier request with at least one
  /// put (to the launch's group), then adds them to the context's record. In launch join order (models: on the
  /// node's one pipelined thread; athread: under the layer's lock).
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
    std::uint64_t site = 0;  // the issuing code, when known (GroupCheck::Rec)
    SiteText where = nullptr;
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
  /// The origin's request, its buffer named as `g` names buffers.
  static std::string describe(const Record& record, const Origin& origin, const GroupCheck& g);

  std::string why_;
  std::map<std::uint32_t, Record> contexts_;
};

}  // namespace ldmsim::detail
