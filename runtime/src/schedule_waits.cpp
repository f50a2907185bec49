// The DMA waits of a ConcurrentMachine's cores (see schedule_waits.hpp), read through a context's NodeLink.
#include "ldmsim/runtime/schedule_waits.hpp"

#include <algorithm>

#include "machine_impl.hpp"
#include "node_link.hpp"

namespace ldmsim {

std::vector<std::vector<std::vector<ScheduleSpan>>> dma_waits(ConcurrentMachine& node) {
  std::vector<std::vector<std::vector<ScheduleSpan>>> out;
  const auto* link = node.context(0).find_host_state<detail::NodeLink>();
  if (link == nullptr || link->node == nullptr) return out;
  for (const auto& group : link->node->groups) {
    auto& cores = out.emplace_back();
    for (const auto& core : group->cores) {
      auto& waits = cores.emplace_back(core.dma_waits());
      std::stable_sort(waits.begin(), waits.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    }
  }
  return out;
}

}  // namespace ldmsim
