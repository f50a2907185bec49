// First-fit offset allocator for a core's local store.
#include "ldmsim/sim/local_store.hpp"

#include <algorithm>

namespace ldmsim {

LdmAllocator::LdmAllocator(std::uint64_t capacity) : capacity_(capacity) {}

std::optional<LdmAddr> LdmAllocator::allocate(std::uint64_t bytes, std::uint64_t alignment) {
  if (bytes == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return std::nullopt;
  std::uint64_t candidate = 0;
  for (const auto& [offset, size] : live_) {
    if (offset >= candidate && offset - candidate >= bytes) break;
    candidate = (offset + size + alignment - 1) & ~(alignment - 1);
  }
  if (candidate > capacity_ || capacity_ - candidate < bytes) return std::nullopt;
  const auto offset = static_cast<LdmAddr>(candidate);
  live_.emplace(offset, bytes);
  used_ += bytes;
  high_water_ = std::max(high_water_, used_);
  peak_extent_ = std::max(peak_extent_, candidate + bytes);
  return offset;
}

bool LdmAllocator::free(LdmAddr offset) {
  auto it = live_.find(offset);
  if (it == live_.end()) return false;
  used_ -= it->second;
  live_.erase(it);
  return true;
}

void LdmAllocator::reset() {
  live_.clear();
  used_ = 0;
}

LdmShortfall LdmAllocator::shortfall(std::uint64_t requested) const {
  std::uint64_t largest = 0;
  std::uint64_t cursor = 0;
  for (const auto& [offset, size] : live_) {
    largest = std::max(largest, offset - std::min<std::uint64_t>(offset, cursor));
    cursor = std::max<std::uint64_t>(cursor, offset + size);
  }
  largest = std::max(largest, capacity_ - std::min(capacity_, cursor));
  return LdmShortfall{requested, capacity_ - used_, largest, high_water_};
}

}  // namespace ldmsim
