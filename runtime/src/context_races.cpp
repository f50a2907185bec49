// Cross-model race records and their check at each launch's join (context_races.hpp).
#include "context_races.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "check_state.hpp"

namespace ldmsim::detail {

void ContextRaces::insert(std::map<DeviceAddr, Range>& ranges, DeviceAddr lo, DeviceAddr hi, DeviceAddr region,
                          const Origin& origin) {
  auto it = ranges.upper_bound(lo);
  if (it != ranges.begin()) {
    auto before = std::prev(it);
    if (before->second.region == region && before->second.hi >= lo) {  // grows the range before (its origin stays)
      lo = before->first;
      hi = std::max(hi, before->second.hi);
      Range kept = before->second;
      ranges.erase(before);
      while (it != ranges.end() && it->first <= hi && it->second.region == region) {
        hi = std::max(hi, it->second.hi);
        it = ranges.erase(it);
      }
      kept.hi = hi;
      ranges.emplace(lo, kept);
      return;
    }
  }
  Range fresh{hi, region, origin};
  while (it != ranges.end() && it->first <= hi && it->second.region == region) {
    fresh.hi = std::max(fresh.hi, it->second.hi);
    it = ranges.erase(it);
  }
  ranges.emplace(lo, fresh);
}

const ContextRaces::Range* ContextRaces::meet(const std::map<DeviceAddr, Range>& ranges, DeviceAddr lo, DeviceAddr hi,
                                              DeviceAddr* at) {
  auto it = ranges.upper_bound(lo);
  if (it != ranges.begin()) --it;
  for (; it != ranges.end() && it->first < hi; ++it) {
    if (it->second.hi <= lo) continue;
    *at = std::max(lo, it->first);
    return &it->second;
  }
  return nullptr;
}

std::string ContextRaces::describe(const Record& record, const Origin& origin, const GroupCheck& g) {
  const DmaRequest& q = origin.request;
  const std::string buffer = g.buffer(q.main);
  return fmt::format(
      "{} kernel {} core group {} core {} {} ({} {}, {} bytes, main [0x{:x}, 0x{:x}) in '{}', "
      "issued at cycle {}{})",
      record.label, record.kernels[origin.kernel], origin.cg, origin.core, q.api, to_string(q.mode),
      q.op == DmaOp::kGet ? "get" : "put", q.length, q.main, q.main_end(), buffer, origin.issue,
      origin.where != nullptr ? " by " + origin.where(origin.site) : std::string());
}

void ContextRaces::forget(DeviceAddr lo, DeviceAddr hi) {
  for (auto& [context, record] : contexts_) {
    for (auto* ranges : {&record.reads, &record.writes}) {
      auto it = ranges->upper_bound(lo);
      if (it != ranges->begin() && std::prev(it)->second.hi > lo) --it;
      while (it != ranges->end() && it->first < hi) it = ranges->erase(it);  // ranges never cross allocations
    }
  }
}

void ContextRaces::add_launch(std::uint32_t context, const std::string& label, const std::vector<GroupCheck*>& groups,
                              const MainMemory& memory) {
  Record& own = contexts_[context];
  own.label = label;
  for (GroupCheck* g : groups) {
    const auto kernel = static_cast<std::uint32_t>(own.kernels.size());
    own.kernels.push_back(g->kernel_);
    for (const GroupCheck::Rec& r : g->launch_log_) {
      const DmaRequest& q = r.request;
      const bool put = q.op == DmaOp::kPut;
      const Region* region = memory.find_region(q.main, 1);
      const DeviceAddr base = region != nullptr ? region->base : 0;
      bool reported = false;
      for (std::uint64_t k = 0; k < q.block_count(); ++k) {
        const DeviceAddr lo = q.main + k * q.block_pitch();
        const DeviceAddr hi = lo + q.block_bytes();
        for (auto& [other_context, other] : contexts_) {
          if (reported || other_context == context) continue;
          DeviceAddr at = 0;
          const Range* hit = meet(other.writes, lo, hi, &at);
          if (hit == nullptr && put) hit = meet(other.reads, lo, hi, &at);
          if (hit == nullptr) continue;
          const DmaRequest& o = hit->origin.request;
          g->add("dma-race",
                 fmt::format("models {} {} / {} {}{} on '{}'", o.api, o.op == DmaOp::kGet ? "get" : "put", q.api,
                             put ? "put" : "get", GroupCheck::site_key(r), g->buffer(at)),
                 r.core, r.issue,
                 fmt::format("{} and {} core group {} core {} {} overlap in main memory at 0x{:x}: {}, so the result "
                             "depends on which reaches memory first",
                             describe(other, hit->origin, *g), label, g->cg_, r.core, g->describe(r), at, why_));
          reported = true;
        }
        insert(put ? own.writes : own.reads, lo, hi, base, Origin{kernel, g->cg_, r.core, r.issue, q, r.site, r.where});
      }
    }
  }
}

}  // namespace ldmsim::detail
