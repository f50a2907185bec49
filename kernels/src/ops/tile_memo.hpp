// Private: host-side reuse of work that a team's cores repeat. The members of a row team receive the same B
// reads by ROW broadcast (a group team's by BCAST; matrix_multiply.cpp keeps its own memo of stored B tiles):
// - each lays out the same reads in its ldm as its leader issues them (the same tile, the same buffer), and
// - each would build the same float tile from the same ldm values (the same input elements).
// A tile source's inputs (the tensor it reads and its offset table) are not written while its kernel runs (conv
// rejects an output that overlaps its input when it reads tiles from it), so both are pure functions of the tile
// source, the tile's coordinates and, for a layout, the buffer: a result computed lately on the same host thread for
// equal integers is reused instead of computed again, without reading the ldm values. Simulated time is unaffected:
// every core is still charged its own work. Only the host's work shrinks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "ldmsim/runtime/core.hpp"
#include "product_queue.hpp"
#include "tile_floats.hpp"

namespace ldmsim::ops {

/// Everything a reused computation depends on, as integers: which source (an id never reused), which tile and,
/// for a layout, which buffer.
using TileKey = std::vector<std::uint64_t>;

/// The newest `Slots` results of one kind computed by the cores a host thread runs, by key.
template <typename Value, std::size_t Slots>
class HostMemo {
 public:
  /// The memo of the host thread running `core` (Core::group_state; fibers of one thread never switch inside a lookup
  /// and its computation, so a value found here stays valid until the thread's next insert). Kept across launches by
  /// the machine: keys hold source ids, which are never reused, so an older launch's values are never found.
  static HostMemo& of(Core& core) { return core.group_state<HostMemo>(); }

  /// A key to fill for the next lookup (cleared; its storage is reused).
  TileKey& scratch_key() {
    scratch_.clear();
    return scratch_;
  }
  /// The value computed from scratch_key()'s inputs, or nullptr.
  const Value* find() const {
    for (const Slot& slot : slots_) {
      if (slot.used && slot.key == scratch_) return &slot.value;
    }
    return nullptr;
  }
  /// The value the next insert() will reuse, or nullptr while that slot is unused.
  const Value* next_reused() const { return slots_[oldest_].used ? &slots_[oldest_].value : nullptr; }
  /// Stores scratch_key() in the oldest slot and returns that slot's value to compute into (its old contents
  /// left in place, so its storage is reused).
  Value& insert() {
    Slot& slot = slots_[oldest_];
    oldest_ = (oldest_ + 1) % Slots;
    std::swap(slot.key, scratch_);  // the old key's storage becomes the next scratch key
    slot.used = true;
    return slot.value;
  }

 private:
  struct Slot {
    TileKey key;
    Value value;
    bool used = false;
  };
  Slot slots_[Slots];
  std::size_t oldest_ = 0;
  TileKey scratch_;
};

/// The host products in `products` (the queue of the memo's host thread, product_queue.hpp) that read the tile
/// `memo`'s next insert() overwrites run first: every insert of a float tile goes through here.
template <typename Memo>
void settle_before_insert(ProductQueue& products, const Memo& memo) {
  if (const TileFloats* reused = memo.next_reused()) {
    products.flush_reading(reused->data(), reused->data() + reused->size());
  }
}

/// Built B tiles: a mesh row's worth of teams in flight.
class TileMemo : public HostMemo<TileFloats, 8> {
 public:
  static TileMemo& of(Core& core);
  /// insert() with the tile buffer at least `elements` floats, after the products queued in `products` (the host
  /// thread's, ProductQueue::of) that read the tile it overwrites.
  TileFloats& insert(ProductQueue& products, std::size_t elements);
  /// A unique id for a tile source (ids are never reused, so a new source never matches an old one's tiles).
  static std::uint64_t next_source_id();
};

/// Read layouts of B tiles (PendingTile::starts): the teams of every core group a host thread runs are in flight
/// at once.
using PlanMemo = HostMemo<std::vector<std::size_t>, 32>;

}  // namespace ldmsim::ops
