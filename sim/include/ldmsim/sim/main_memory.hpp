// Device main memory: a simulated 64-bit address space, one window per core group, committed lazily in
// chunks so that a 96 GiB node costs only the bytes that are touched. Allocations are regions; region
// lookup lets the DMA engine trap any access that is not inside one live region.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// One live allocation.
struct Region {
  DeviceAddr base = 0;
  std::uint64_t bytes = 0;
  int cg = 0;  ///< the core group whose memory window holds it
  std::string name;

  DeviceAddr end() const { return base + bytes; }
};

/// The device main memory of a whole node. Allocation and free happen on the control core (not during a
/// launch), or, in concurrent mode, on the control cores of several core groups at once (each in its group's
/// window); reads and writes may come from any host thread concurrently (chunks commit lock-free).
class MainMemory {
 public:
  /// Address of the first byte of core group 0's window; address 0 is never valid.
  static constexpr DeviceAddr kBase = 0x10'0000'0000ull;
  static constexpr std::uint64_t kChunkBytes = 1ull << 21;

  MainMemory(std::uint32_t core_groups, std::uint64_t bytes_per_cg);
  /// The core group whose memory window holds `addr` (windows of `bytes_per_cg` bytes from kBase, in order).
  static std::uint64_t window_of(DeviceAddr addr, std::uint64_t bytes_per_cg) { return (addr - kBase) / bytes_per_cg; }
  ~MainMemory();
  MainMemory(const MainMemory&) = delete;
  MainMemory& operator=(const MainMemory&) = delete;

  /// What a new region holds before its first write.
  enum class Fill {
    kZeroed,       ///< zeros, whatever a freed region there held
    kOverwritten,  ///< what freed regions there left, not cleared: the caller writes every byte before any read
  };
  /// Allocates `bytes` (> 0) in core group `cg`'s window, aligned to `alignment` (a power of two >= 4).
  /// Deterministic first-fit. Throws ConfigError when it does not fit.
  DeviceAddr allocate(std::uint64_t bytes, std::uint64_t alignment = 256, int cg = 0, std::string name = {},
                      Fill fill = Fill::kZeroed);
  /// Frees a region by its base address; its bytes read as zero if allocated again (Fill::kZeroed). Throws on a bad
  /// base.
  void free(DeviceAddr base);

  /// The live region containing [addr, addr + bytes), or nullptr when the range is not inside one region.
  const Region* find_region(DeviceAddr addr, std::uint64_t bytes) const;
  /// The live region nearest to addr (for diagnostics; a copy, since in concurrent mode another group's control may
  /// free it), or nullopt when there is none.
  std::optional<Region> nearest_region(DeviceAddr addr) const;
  /// All live regions in address order.
  std::vector<Region> regions() const;

  /// Raw byte access; the caller has checked the range against find_region.
  void read(DeviceAddr addr, std::span<std::byte> out) const;
  void write(DeviceAddr addr, std::span<const std::byte> in);
  /// Makes `bytes` (kept alive by `owner`, never written through, exactly the size of the live region at `base`)
  /// the region's contents, as writing them would, without copying them: reads see them, and the first write
  /// anywhere in the region copies them into the region's own memory first. Spares staging a model's constants a
  /// copy (and their first touches). On the control core, like allocate; std::logic_error when the bytes do not
  /// fill the region.
  void lend(DeviceAddr base, std::shared_ptr<const void> owner, std::span<const std::byte> bytes);
  /// Live regions whose contents are still lent (not yet copied by a write).
  std::size_t lent_regions() const;
  /// Bytes lent to the live region at `base` and their owner, while no write has copied them; nullopt otherwise.
  /// Lets a copy of a lent region be lent the same bytes instead of reading them into a buffer of its own.
  struct LentBytes {
    std::shared_ptr<const void> owner;
    std::span<const std::byte> bytes;
  };
  std::optional<LentBytes> lent_bytes(DeviceAddr base) const;
  /// Group `cg` reads the live region at `base` from `copy` instead: a live region of the same size in cg's window
  /// holding the same bytes (a constant replicated in every group's memory, so that each group reads it locally;
  /// docs/splitting.md). On the control core, like allocate; std::logic_error when either is not the base of a live
  /// region, the sizes differ or `copy` is not in cg's window. Freeing `base` or any copy ends its replication.
  void add_replica(DeviceAddr base, int cg, DeviceAddr copy);
  /// When [addr, addr + bytes) lies in a region with replicas: where group `cg` reads those bytes (in its copy, or
  /// addr itself when cg has none); nullopt otherwise.
  std::optional<DeviceAddr> replica_of(DeviceAddr addr, std::uint64_t bytes, int cg) const;
  /// True when some region has replicas (a DMA engine looks requests up only then).
  bool has_replicas() const { return replicated_.load(std::memory_order_relaxed); }
  /// Commits and populates the host pages behind [addr, addr + bytes) (see host_pages.hpp), stopping early once
  /// `stop` is set: the bytes still read as before (zero where never written), only their first touch moves here.
  void prefault(DeviceAddr addr, std::uint64_t bytes, const std::atomic<bool>& stop);

  /// Concurrent mode (Machine::run_group_controls): allocation and free may then run on several host threads while
  /// other threads' launches read and write, so the region, loan and replica maps are locked. Off (one control
  /// core), nothing is locked. Switched while no launch runs.
  void set_concurrent(bool on) { concurrent_.store(on, std::memory_order_relaxed); }
  bool concurrent() const { return concurrent_.load(std::memory_order_relaxed); }

  std::uint64_t bytes_per_cg() const { return bytes_per_cg_; }
  std::uint32_t core_groups() const { return core_groups_; }
  /// Host bytes committed so far (chunks touched by a write).
  std::uint64_t committed_bytes() const;
  /// Bytes in live regions.
  std::uint64_t allocated_bytes() const { return allocated_bytes_; }

 private:
  /// Bytes lent to a region (lend): read in place until a write copies them into the chunks (`copied`).
  struct Loan {
    DeviceAddr base = 0;
    std::span<const std::byte> bytes;
    std::shared_ptr<const void> owner;
    std::atomic<bool> copied{false};
  };

  std::byte* chunk_for_write(std::uint64_t index);
  /// One chunk's bytes [offset, offset + n) from the chunks, zeros where none is committed.
  void read_chunk(std::uint64_t offset, std::byte* out, std::size_t n) const;
  /// read_chunk, with the pieces inside loans not yet copied taken from the lent bytes.
  void read_lent(std::uint64_t offset, std::byte* out, std::size_t n) const;
  /// Copies every loan overlapping [addr, addr + bytes) that is not copied yet into the chunks.
  void copy_loans(DeviceAddr addr, std::uint64_t bytes);
  /// Drops the loan of the region at `base`, and every loan copied since it was made (on the control core).
  void drop_loans(DeviceAddr base);
  /// Writes `in` at `addr` into the chunks, committing them as needed (loans not considered).
  void write_chunks(DeviceAddr addr, std::span<const std::byte> in);
  /// Freed bytes of committed chunks are recorded dirty (zeroed when allocated again); the chunks keep their pages.
  void release(DeviceAddr addr, std::uint64_t bytes);
  void mark_dirty(DeviceAddr addr, std::uint64_t bytes);
  /// Zeroes the dirty bytes in a range being allocated (with kOverwritten only forgets them: the caller overwrites
  /// them). Zeroing at allocation, not at free, spares the bytes never allocated again (a run's tensors freed as it
  /// ends).
  void clean(DeviceAddr addr, std::uint64_t bytes, Fill fill);

  std::uint32_t core_groups_;
  std::uint64_t bytes_per_cg_;
  /// The chunk of `index` (null until committed), shared by every host thread.
  std::atomic_ref<std::byte*> chunk_slot(std::uint64_t index) const { return std::atomic_ref(chunk_table_[index]); }
  /// One pointer per chunk, in an anonymous mapping: a table for a large node (49,152 entries for 96 GiB) is
  /// read as zeros, so only the pages of the chunks used are ever touched (a zeroed array faulted all ~100).
  struct TableMapping {
    std::size_t bytes;  // no initializer: the enclosing class must be complete for that to count as a default
    void operator()(std::byte** table) const;
  };
  std::unique_ptr<std::byte*[], TableMapping> chunk_table_;
  std::uint64_t chunk_count_;
  mutable std::mutex committed_mutex_;
  std::vector<std::byte*> committed_;     // the chunks committed, to unmap and count without reading the table
  std::map<DeviceAddr, Region> regions_;  // by base
  std::vector<std::map<DeviceAddr, std::uint64_t>> free_lists_;  // per cg: base -> bytes
  std::map<DeviceAddr, std::uint64_t> dirty_;  // freed bytes not zeroed yet: base -> bytes, each within one chunk
  // Loans of live regions by base (they never overlap: one per region): changed only on the control core (lend
  // and free also drop the loans copied since), looked up by every read and write while any is held. One
  // copy_mutex_ serialises the copies that first writes make from any thread.
  std::map<DeviceAddr, std::unique_ptr<Loan>> loans_;
  /// The first loan that may overlap [addr, ...): the last one starting at or before addr, else the first after.
  std::map<DeviceAddr, std::unique_ptr<Loan>>::const_iterator first_loan_from(DeviceAddr addr) const;
  std::mutex copy_mutex_;
  /// Replicated regions by base: their size and each group's copy (0: none). Changed on the control core only.
  struct Replicas {
    std::uint64_t bytes = 0;
    std::vector<DeviceAddr> copies;
  };
  std::map<DeviceAddr, Replicas> replicas_;
  std::atomic<bool> replicated_{false};  // !replicas_.empty(), read by every request without the maps' lock
  std::uint64_t allocated_bytes_ = 0;
  std::vector<std::uint64_t> allocated_in_cg_;  // per window: a failed allocation names its own group's use
  std::atomic<bool> concurrent_{false};
  mutable std::shared_mutex maps_mutex_;  // taken only in concurrent mode
  /// The maps for reading (shared) or changing (exclusive): locked in concurrent mode, else an empty lock.
  std::shared_lock<std::shared_mutex> read_lock() const;
  std::unique_lock<std::shared_mutex> write_lock();
};

}  // namespace ldmsim
