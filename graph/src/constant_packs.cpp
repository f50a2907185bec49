// Staging an op's constant packs (placement.hpp, docs/splitting.md "Constant packs").
#include <fmt/format.h>

#include <algorithm>

#include "placement.hpp"

namespace ldmsim::executor_detail {

PackImage stage_packs(Machine& machine, const packing::PackPlan& plan, std::span<const std::span<const f16>> inputs,
                      const std::string& name) {
  std::vector<std::span<const f16>> values(inputs.begin(), inputs.end());
  for (const std::vector<f16>& d : plan.derived) values.emplace_back(d);
  const std::size_t align = machine.arch().dma.transaction_bytes;
  // Workers with the same entries get the same bytes: one pack is built and staged for them all.
  std::vector<std::size_t> first_of(plan.cores.size());  // the worker whose pack each worker reads
  std::vector<std::vector<std::byte>> packs;             // by distinct worker, in order
  std::vector<std::size_t> distinct, offsets;
  std::size_t total = 0;
  for (std::size_t w = 0; w < plan.cores.size(); ++w) {
    if (plan.cores[w].empty()) continue;
    const auto same =
        std::find_if(distinct.begin(), distinct.end(), [&](std::size_t d) { return plan.cores[d] == plan.cores[w]; });
    if (same != distinct.end()) {
      first_of[w] = static_cast<std::size_t>(same - distinct.begin());
      continue;
    }
    first_of[w] = distinct.size();
    distinct.push_back(w);
    packs.push_back(packing::build_pack(plan.cores[w], values));
    offsets.push_back(total);
    total += (packs.back().size() + align - 1) / align * align;
  }
  PackImage image;
  if (total == 0) return image;
  image.base = machine.allocate_bytes(total, AllocOptions{.cg = 0, .alignment = 256, .name = "packs:" + name});
  for (std::size_t d = 0; d < packs.size(); ++d) machine.write_bytes(image.base + offsets[d], packs[d]);
  image.packs.addr.assign(plan.cores.size(), 0);
  image.packs.bytes.assign(plan.cores.size(), 0);
  image.packs.total_bytes = total;
  for (std::size_t w = 0; w < plan.cores.size(); ++w) {
    if (plan.cores[w].empty()) continue;
    const std::size_t d = first_of[w];
    image.packs.addr[w] = image.base + offsets[d];
    image.packs.bytes[w] = static_cast<std::uint32_t>(packs[d].size());
    image.packs.max_bytes = std::max(image.packs.max_bytes, image.packs.bytes[w]);
    ++image.cores;
  }
  return image;
}

}  // namespace ldmsim::executor_detail
