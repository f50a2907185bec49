// Host-side reuse of a row team's repeated work (see tile_memo.hpp).
#include "tile_memo.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace ldmsim::ops {

namespace {

/// Visits a key's values as contiguous pieces: `values`, then each run.
template <typename Visit>
bool for_each_piece(const TileKey& key, Visit&& visit) {
  if (!key.values.empty() && !visit(key.values.data(), key.values.size())) return false;
  for (const auto& [from, count] : key.runs) {
    if (count > 0 && !visit(from, count)) return false;
  }
  return true;
}

}  // namespace

std::size_t TileKey::value_count() const {
  std::size_t n = values.size();
  for (const auto& run : runs) n += run.second;
  return n;
}

bool TileKey::operator==(const TileKey& other) const {
  if (header != other.header || value_count() != other.value_count()) return false;
  if (!runs.empty() && !other.runs.empty()) {  // neither stored: compare copies
    TileKey mine = *this, theirs = other;
    mine.materialize(), theirs.materialize();
    return mine == theirs;
  }
  // One side's values are all in `values`: walk the other's pieces along them.
  const TileKey& flat = runs.empty() ? *this : other;
  const TileKey& pieces = runs.empty() ? other : *this;
  std::size_t at = 0;
  return for_each_piece(pieces, [&](const f16* from, std::size_t count) {
    const bool equal = std::memcmp(from, flat.values.data() + at, count * sizeof(f16)) == 0;
    at += count;
    return equal;
  });
}

void TileKey::materialize() {
  if (runs.empty()) return;
  std::size_t at = values.size();
  values.resize(value_count());
  for (const auto& [from, count] : runs) {
    std::memcpy(values.data() + at, from, count * sizeof(f16));
    at += count;
  }
  runs.clear();
}

TileMemo& TileMemo::of_this_thread() {
  return thread_cache<TileMemo>();
}

std::vector<float>& TileMemo::insert(std::size_t elements) {
  std::vector<float>& tile = HostMemo::insert();
  if (tile.size() < elements) tile.resize(elements);
  return tile;
}

std::uint64_t TileMemo::next_source_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

}  // namespace ldmsim::ops
