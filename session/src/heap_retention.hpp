// A simulated run allocates and frees the same host buffers launch after launch (a kernel's float tiles and
// accumulators, per core). With glibc's default thresholds a freed block of more than 128 KiB goes back to the
// kernel at once and a freed heap top is trimmed, so the next launch faults the same pages in again: on the VMs
// measured a fresh page costs several microseconds, about a tenth of a CNN's execute phase (docs/benchmarks.md).
// While a HeapRetention lives, blocks up to 32 MiB come from the heap and an arena's free top is trimmed only once
// it exceeds the largest `keep_bytes` any holder asked for (glibc's trim threshold, per arena; past it glibc
// trims down to its top pad). Where the user set the thresholds (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_
// or their GLIBC_TUNABLES) a HeapRetention leaves them as they are and does nothing.
#pragma once

#include <cstdint>

namespace ldmsim {

/// What a run keeps: more than the transient buffers of any launch measured (tens of MiB on ResNet-50).
inline constexpr std::uint64_t kRunHeapKeepBytes = std::uint64_t{64} << 20;

class HeapRetention {
 public:
  /// Raises glibc's thresholds (process-wide; holders on any thread share them): the trim threshold to the
  /// largest `keep_bytes` of the holders alive, the mmap threshold to 32 MiB. Does nothing with another allocator
  /// or where the user set the thresholds. An application's own mallopt settings are replaced while a holder lives
  /// and by glibc's defaults after the last.
  explicit HeapRetention(std::uint64_t keep_bytes);
  /// The last holder to go sets glibc's default thresholds back (its dynamic mmap threshold stays off, as after
  /// any mallopt); otherwise the trim threshold becomes the largest `keep_bytes` of those left.
  ~HeapRetention();
  HeapRetention(const HeapRetention&) = delete;
  HeapRetention& operator=(const HeapRetention&) = delete;

  /// Whether glibc took both thresholds (false with another allocator, user-set thresholds, or where mallopt
  /// refused them).
  bool active() const { return active_; }

 private:
  std::uint64_t keep_bytes_;
  bool active_ = false;
};

}  // namespace ldmsim
