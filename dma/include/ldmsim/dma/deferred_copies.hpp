// The copies a BCAST or ROW get owes its other receivers when its issuer asked for them on read
// (DmaRequest::replicate_on_read). The first receiver gets the bytes; every other receiver is owed the same range
// of its own store, copied from the first receiver's when something could see the difference: the receiver reads
// the range (Core::ready_ldm), a request reads or writes it, or the source range is about to be overwritten or
// freed. A copy never read is dropped when its buffer is freed or the launch ends, whose allocations all die: the
// store keeps its earlier bytes there, which are undefined to whatever allocates them next, as the copy's would
// be. Host work only: simulated time, the trace and every byte a kernel may read are those of eager copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ldmsim {

class DeferredCopies {
 public:
  /// `ldm_base` holds `cores` local stores of `ldm_bytes` each, back to back.
  DeferredCopies(std::byte* ldm_base, std::uint64_t ldm_bytes, std::size_t cores);

  bool empty() const { return owed_count_ == 0; }
  /// `core` is owed [begin, end) of its store (offsets in the physical store) from the same range of `source`'s.
  void owe(int core, int source, std::uint64_t begin, std::uint64_t end);
  /// Before [begin, end) of `core`'s store is read: the copies owed there made.
  void before_read(int core, std::uint64_t begin, std::uint64_t end);
  /// Before [begin, end) of `core`'s store is written or freed: copies owed to `core` wholly inside dropped, those
  /// partly inside made, and copies that other cores are owed from this range made while it still holds their
  /// bytes.
  void before_write(int core, std::uint64_t begin, std::uint64_t end);
  /// Every core's owed copies in [begin, end) dropped unmade (a launch's end frees all of its stores' buffers).
  void drop(std::uint64_t begin, std::uint64_t end);

 private:
  struct Owed {
    int source;
    std::uint64_t begin, end;
  };
  void make(int core, const Owed& owed);
  /// Removes list[i] (a core's owed copy) and its counts.
  void forget(std::vector<Owed>& list, std::size_t i);
  /// Drops `core`'s owed copies overlapping [begin, end), making those `must_make` says first.
  template <typename MustMake>
  void settle(int core, std::uint64_t begin, std::uint64_t end, MustMake must_make);
  std::byte* stores(int core) const {
    return ldm_base_ + static_cast<std::size_t>(core) * static_cast<std::size_t>(ldm_bytes_);
  }

  std::byte* ldm_base_;
  std::uint64_t ldm_bytes_;
  std::vector<std::vector<Owed>> owed_;  ///< per receiving core
  std::vector<std::size_t> sourced_;     ///< per core: owed copies that read from its store
  std::size_t owed_count_ = 0;
};

}  // namespace ldmsim
