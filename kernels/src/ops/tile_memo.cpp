// Host-side reuse of built B tiles (see tile_memo.hpp).
#include "tile_memo.hpp"

#include <atomic>
#include <cstring>
#include <utility>

namespace ldmsim::ops {

bool TileKey::operator==(const TileKey& other) const {
  return header == other.header && values.size() == other.values.size() &&
         (values.empty() || std::memcmp(values.data(), other.values.data(), values.size() * sizeof(f16)) == 0);
}

void TileKey::add_values(const f16* from, std::size_t count) {
  const std::size_t at = values.size();
  if (values.capacity() < at + count) values.reserve(2 * (at + count));
  values.resize(at + count);
  std::memcpy(values.data() + at, from, count * sizeof(f16));
}

TileMemo& TileMemo::of_this_thread() {
  thread_local TileMemo memo;
  return memo;
}

TileKey& TileMemo::scratch_key() {
  scratch_.header.clear();
  scratch_.values.clear();
  return scratch_;
}

const std::vector<float>* TileMemo::find() const {
  for (const Slot& slot : slots_) {
    if (slot.used && slot.key == scratch_) return &slot.tile;
  }
  return nullptr;
}

std::vector<float>& TileMemo::insert(std::size_t elements) {
  Slot& slot = slots_[oldest_];
  oldest_ = (oldest_ + 1) % kSlots;
  std::swap(slot.key, scratch_);  // the old key's storage becomes the next scratch key
  slot.used = true;
  if (slot.tile.size() < elements) slot.tile.resize(elements);
  return slot.tile;
}

std::uint64_t TileMemo::next_source_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

}  // namespace ldmsim::ops
