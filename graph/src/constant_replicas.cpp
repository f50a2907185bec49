// Constants in every core group's memory (constant_replicas.hpp).
#include "constant_replicas.hpp"

#include <memory>
#include <span>

#include "ldmsim/runtime/check.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::executor_detail {

ConstantReplicas::ConstantReplicas(RunState& state) : s_(state) {}

std::vector<ReplicaCopy> ConstantReplicas::replicate(const DeviceTensor& home) {
  std::vector<ReplicaCopy> copies;
  MainMemory& memory = s_.machine.memory();
  const Region* region = memory.find_region(home.ptr.addr(), 1);
  const std::uint32_t groups = s_.machine.arch().core_groups;
  if (groups < 2 || region == nullptr || region->base != home.ptr.addr()) return copies;
  if (views_.empty()) {  // made at the first constant: a run may replicate none
    views_.resize(groups);
    for (std::size_t g = 1; g < groups; ++g) views_[g] = s_.machine.group_view({static_cast<int>(g)});
  }
  // The staged bytes (padding included), lent to every copy: host memory holds them once. A constant lent to its
  // home region (staged from the model's buffer) lends that buffer on; otherwise its bytes are read once.
  const DeviceAddr base = region->base;
  std::shared_ptr<const void> owner;
  std::span<const std::byte> bytes;
  if (auto lent = memory.lent_bytes(base)) {
    owner = std::move(lent->owner);
    bytes = lent->bytes;
  } else {
    const std::shared_ptr<std::byte[]> read(new std::byte[region->bytes]);  // not zero-filled: read over
    s_.machine.read_bytes(base, std::span<std::byte>(read.get(), region->bytes));
    owner = read;
    bytes = std::span<const std::byte>(read.get(), region->bytes);
  }
  for (std::size_t g = 1; g < views_.size(); ++g) {
    DeviceTensor copy;
    try {
      copy = s_.allocate(*views_[g], home.name, home.plan);
    } catch (const ConfigError&) {
      continue;  // that group's memory is full: its cores read group 0's copy
    }
    memory.lend(copy.ptr.addr(), owner, bytes);
    mark_device_defined(*views_[g], copy.ptr.addr(), bytes.size());  // the init check: the copy holds the constant
    memory.add_replica(base, static_cast<int>(g), copy.ptr.addr());
    copies.push_back({static_cast<int>(g), copy});
  }
  if (!copies.empty()) ++constants_;
  bytes_ += copies.size() * bytes.size();
  return copies;
}

void ConstantReplicas::release(const std::vector<ReplicaCopy>& copies) {
  for (const ReplicaCopy& c : copies) s_.release(c.tensor);
}

}  // namespace ldmsim::executor_detail
