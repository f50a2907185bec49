// First-fit offset allocator for a core's local store.
#include "ldmsim/sim/local_store.hpp"

#include <algorithm>

namespace ldmsim {

LdmAllocator::LdmAllocator(std::uint64_t capacity) : capacity_(capacity) {}

std::optional<LdmAddr> LdmAllocator::allocate(std::uint64_t bytes, std::uint64_t alignment) {
  if (bytes == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return std::nullopt;
  std::uint64_t candidate = 0;
  std::size_t at = 0;  // where the new block goes: before the first block it fits below
  for (; at < live_.size(); ++at) {
    const Block& b = live_[at];
    if (b.offset >= candidate && b.offset - candidate >= bytes) break;
    candidate = (b.offset + b.bytes + alignment - 1) & ~(alignment - 1);
  }
  if (candidate > capacity_ || capacity_ - candidate < bytes) return std::nullopt;
  const auto offset = static_cast<LdmAddr>(candidate);
  if (live_.empty()) live_.reserve(16);  // a kernel's buffers, without regrowing (a no-op on adopted storage)
  live_.insert(live_.begin() + static_cast<std::ptrdiff_t>(at), Block{offset, bytes});
  used_ += bytes;
  high_water_ = std::max(high_water_, used_);
  peak_extent_ = std::max(peak_extent_, candidate + bytes);
  return offset;
}

bool LdmAllocator::free(LdmAddr offset) {
  const auto it =
      std::lower_bound(live_.begin(), live_.end(), offset, [](const Block& b, LdmAddr at) { return b.offset < at; });
  if (it == live_.end() || it->offset != offset) return false;
  used_ -= it->bytes;
  live_.erase(it);
  return true;
}

std::uint64_t LdmAllocator::size_of(LdmAddr offset) const {
  const auto it =
      std::lower_bound(live_.begin(), live_.end(), offset, [](const Block& b, LdmAddr at) { return b.offset < at; });
  return it == live_.end() || it->offset != offset ? 0 : it->bytes;
}

std::vector<LdmAllocator::Block> LdmAllocator::take_storage() {
  std::vector<Block> storage = std::move(live_);
  storage.clear();
  live_ = {};
  used_ = 0;
  return storage;
}

void LdmAllocator::adopt_storage(std::vector<Block> storage) {
  if (!live_.empty()) return;  // blocks live already: keep them where they are
  storage.clear();
  live_ = std::move(storage);
}

void LdmAllocator::reset() {
  live_.clear();
  used_ = 0;
}

LdmShortfall LdmAllocator::shortfall(std::uint64_t requested) const {
  std::uint64_t largest = 0;
  std::uint64_t cursor = 0;
  for (const Block& b : live_) {
    largest = std::max(largest, b.offset - std::min<std::uint64_t>(b.offset, cursor));
    cursor = std::max<std::uint64_t>(cursor, b.offset + b.bytes);
  }
  largest = std::max(largest, capacity_ - std::min(capacity_, cursor));
  return LdmShortfall{requested, capacity_ - used_, largest, high_water_};
}

}  // namespace ldmsim
