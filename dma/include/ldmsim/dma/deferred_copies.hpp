// The copies a BCAST or ROW get owes its other receivers when its issuer asked for them on read
// (DmaRequest::replicate_on_read). The first receiver gets the bytes; every other receiver is owed the same range
// of its own store, copied from the first receiver's when something could see the difference: the receiver reads
// the range (Core::ready_ldm), a request reads or writes it, or the source range is about to be overwritten or
// freed. A copy never read is dropped when its buffer is freed or the launch ends, whose allocations all die: the
// store keeps its earlier bytes there, which are undefined to whatever allocates them next, as the copy's would
// be. Host work only: simulated time, the trace and every byte a kernel may read are those of eager copies.
//
// A get owes one entry, kept with its source and naming its receivers in a mask, so that a request touches the
// entries of the few sources its cores owe from (a row or group leader's), not one entry per receiver: a conv's row
// teams owe seven copies of every row block their leaders read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ldmsim {

class DeferredCopies {
 public:
  /// Receivers are named in 64-bit masks: a group of more cores copies eagerly (can_defer).
  static constexpr std::size_t kMaxCores = 64;

  /// `ldm_base` holds `cores` local stores of `ldm_bytes` each, back to back.
  DeferredCopies(std::byte* ldm_base, std::uint64_t ldm_bytes, std::size_t cores);

  /// Whether owe() may be used (the group has at most kMaxCores cores).
  bool can_defer() const { return cores_ <= kMaxCores; }
  bool empty() const { return entries_ == 0; }
  /// The cores in `receivers` (bit c: core c; not `source`) are owed [begin, end) of their stores (offsets in the
  /// physical store) from the same range of `source`'s. Their earlier copies owed there must be settled first
  /// (before_write).
  void owe(std::uint64_t receivers, int source, std::uint64_t begin, std::uint64_t end);
  /// The core every byte of [begin, end) of `core`'s store is still owed from (its bytes there are what `core`
  /// would read), or -1 when some byte there is not owed.
  int sole_source(int core, std::uint64_t begin, std::uint64_t end) const;
  /// Before [begin, end) of `core`'s store is read: the copies owed there made.
  void before_read(int core, std::uint64_t begin, std::uint64_t end);
  /// Before [begin, end) of the stores of the cores in `cores` (a mask) is written or freed: copies owed to them
  /// wholly inside dropped, those partly inside made, and copies that other cores are owed from their ranges made
  /// while they still hold those bytes.
  void before_write(std::uint64_t cores, std::uint64_t begin, std::uint64_t end);
  /// Every core's owed copies in [begin, end) dropped unmade (a launch's end frees all of its stores' buffers).
  void drop(std::uint64_t begin, std::uint64_t end);
  /// The stores to copy between from now on; none may be owed a copy (std::logic_error otherwise).
  void use_stores(std::byte* ldm_base);

 private:
  struct Owed {
    std::uint64_t begin, end;
    std::uint64_t receivers;  ///< the cores still owed this range
  };
  /// The first of `list`'s entries (a source's, in address order) that ends after `begin`.
  static std::size_t first_overlap(const std::vector<Owed>& list, std::uint64_t begin);
  void make(int core, int source, const Owed& owed);
  /// Clears `cores` from `owed`'s receivers (an entry of source `source`) and from their counts. False when no
  /// receiver is left: the entry is then to be removed.
  bool settle(int source, Owed& owed, std::uint64_t cores);
  /// Calls visit(entry) for each of `source`'s entries that overlap [begin, end), in order, and removes those it
  /// returns false for in one pass: removing them one by one shifted a long list once per entry.
  template <typename Visit>
  void sweep(int source, std::uint64_t begin, std::uint64_t end, Visit&& visit);

  std::byte* ldm_base_;
  std::uint64_t ldm_bytes_;
  std::size_t cores_;
  std::vector<std::vector<Owed>> owed_;  ///< per source core: entries in address order, never overlapping
  std::vector<std::uint64_t> sources_;   ///< per receiver: the sources it is owed copies from
  std::vector<std::uint32_t> count_;     ///< copies receiver r is owed from source s, at [r * cores + s]
  std::size_t entries_ = 0;
};

}  // namespace ldmsim
