// A compute core's local store (ldm): a private scratchpad of ldm_bytes with a first-fit allocator that
// hands out offsets, tracks the high-water mark, and reports overflow with requested/free/high-water bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// The result of a failed allocation, for the ldm-overflow fault message.
struct LdmShortfall {
  std::uint64_t requested = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t largest_free = 0;
  std::uint64_t high_water = 0;
};

/// Offset allocator over [0, capacity). Not thread-safe: one core owns it.
class LdmAllocator {
 public:
  explicit LdmAllocator(std::uint64_t capacity);

  /// Allocates `bytes` (> 0) aligned to `alignment` (power of two); nullopt when it does not fit.
  std::optional<LdmAddr> allocate(std::uint64_t bytes, std::uint64_t alignment);
  /// Frees an allocation by its offset; false when `offset` is not a live allocation.
  bool free(LdmAddr offset);
  /// Bytes of the live allocation at `offset`; 0 when there is none.
  std::uint64_t size_of(LdmAddr offset) const;
  /// Frees everything (the high-water mark is kept).
  void reset();

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t used() const { return used_; }
  std::uint64_t high_water() const { return high_water_; }
  /// Highest byte offset ever handed out (end of the topmost allocation): bytes the kernel really needs.
  std::uint64_t peak_extent() const { return peak_extent_; }
  LdmShortfall shortfall(std::uint64_t requested) const;

  struct Block {
    LdmAddr offset;
    std::uint64_t bytes;
  };
  /// The storage of the blocks, emptied, for an allocator made later (a core's allocator lives for one launch; the
  /// next launch's core takes it over with adopt_storage instead of allocating its own). Frees everything, as reset.
  std::vector<Block> take_storage();
  /// Uses `storage` (emptied here) for the blocks to come, when the allocator holds none; otherwise does nothing
  /// (its blocks stay where they are).
  void adopt_storage(std::vector<Block> storage);

 private:
  std::uint64_t capacity_;
  std::uint64_t used_ = 0;
  std::uint64_t high_water_ = 0;
  std::uint64_t peak_extent_ = 0;
  // By offset. A core holds a few blocks at a time: a vector allocates once where a map allocated per block.
  std::vector<Block> live_;
};

}  // namespace ldmsim
