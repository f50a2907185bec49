// Private: host-side reuse of built B tiles. The members of a row team receive the same B reads by ROW broadcast,
// so each would build the same float tile from identical ldm values; a build is a pure function of what it reads
// (the tile source, the tile's coordinates and the ldm values), so a tile built lately on this host thread from
// equal inputs is reused instead of built again. Simulated time is unaffected: every core is still charged its
// build. Only the host's work shrinks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ldmsim/sim/fp16.hpp"

namespace ldmsim::ops {

/// Everything a tile build reads: integers (which source, which tile, how its reads are laid out) and the ldm
/// values themselves.
struct TileKey {
  std::vector<std::uint64_t> header;
  std::vector<f16> values;
  bool operator==(const TileKey& other) const;
  void add_values(const f16* from, std::size_t count);
};

class TileMemo {
 public:
  /// This host thread's memo (fibers of one thread never switch inside a build, so a tile found here stays valid
  /// until this thread's next insert).
  static TileMemo& of_this_thread();

  /// A key to fill for the next lookup (cleared; its storage is reused).
  TileKey& scratch_key();
  /// The tile built from scratch_key()'s inputs, or nullptr.
  const std::vector<float>* find() const;
  /// Stores scratch_key() in the oldest slot and returns that slot's tile buffer (elements floats) to build into.
  std::vector<float>& insert(std::size_t elements);

  /// A unique id for a tile source (ids are never reused, so a new source never matches an old one's tiles).
  static std::uint64_t next_source_id();

 private:
  static constexpr std::size_t kSlots = 8;  ///< a mesh row's worth of teams in flight
  struct Slot {
    TileKey key;
    std::vector<float> tile;
    bool used = false;
  };
  Slot slots_[kSlots];
  std::size_t oldest_ = 0;
  TileKey scratch_;
};

}  // namespace ldmsim::ops
