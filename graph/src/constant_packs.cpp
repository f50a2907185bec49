// Staging an op's constant packs (executor_support.hpp, docs/splitting.md "Constant packs").
#include <fmt/format.h>

#include <algorithm>

#include "executor_support.hpp"

namespace ldmsim::executor_detail {

PackImage stage_packs(Machine& machine, const packing::PackPlan& plan, std::span<const std::span<const f16>> inputs,
                      const std::string& name) {
  std::vector<std::span<const f16>> values(inputs.begin(), inputs.end());
  for (const std::vector<f16>& d : plan.derived) values.emplace_back(d);
  const std::size_t align = machine.arch().dma.transaction_bytes;
  std::vector<std::vector<std::byte>> packs(plan.cores.size());
  std::vector<std::size_t> offsets(plan.cores.size());
  std::vector<std::size_t> distinct;  // workers whose packs were laid out
  std::size_t total = 0;
  PackImage image;
  for (std::size_t w = 0; w < plan.cores.size(); ++w) {
    if (plan.cores[w].empty()) continue;
    packs[w] = packing::build_pack(plan.cores[w], values);
    // Cores whose packs are byte for byte the same read one staged copy.
    const auto same =
        std::find_if(distinct.begin(), distinct.end(), [&](std::size_t d) { return packs[d] == packs[w]; });
    if (same != distinct.end()) {
      offsets[w] = offsets[*same];
      continue;
    }
    distinct.push_back(w);
    offsets[w] = total;
    total += (packs[w].size() + align - 1) / align * align;
  }
  if (total == 0) return image;
  image.base = machine.allocate_bytes(total, AllocOptions{.cg = 0, .alignment = 256, .name = "packs:" + name});
  image.packs.addr.assign(plan.cores.size(), 0);
  image.packs.bytes.assign(plan.cores.size(), 0);
  image.packs.total_bytes = total;
  for (std::size_t w = 0; w < packs.size(); ++w) {
    if (packs[w].empty()) continue;
    if (std::find(distinct.begin(), distinct.end(), w) != distinct.end())
      machine.write_bytes(image.base + offsets[w], packs[w]);
    image.packs.addr[w] = image.base + offsets[w];
    image.packs.bytes[w] = static_cast<std::uint32_t>(packs[w].size());
    image.packs.max_bytes = std::max(image.packs.max_bytes, image.packs.bytes[w]);
    ++image.cores;
  }
  return image;
}

}  // namespace ldmsim::executor_detail
