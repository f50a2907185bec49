// Host-side reuse of a row team's repeated work (see tile_memo.hpp).
#include "tile_memo.hpp"

#include <atomic>

namespace ldmsim::ops {

TileMemo& TileMemo::of(Core& core) {
  return core.group_state<TileMemo>();
}

TileFloats& TileMemo::insert(ProductQueue& products, std::size_t elements) {
  settle_before_insert(products, *this);
  TileFloats& tile = HostMemo::insert();
  if (tile.size() < elements) tile.resize(elements);
  return tile;
}

std::uint64_t TileMemo::next_source_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

}  // namespace ldmsim::ops
