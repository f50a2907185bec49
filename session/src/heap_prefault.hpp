// Faulting in fresh pages was about half of an ONNX import's host time: the import writes every fp32 weight,
// rounded to fp16, into a buffer of its own, and a first touch costs ~0.4-0.6 ms per MB on the VMs measured
// (docs/benchmarks.md). HeapPrefault grows the main thread's heap by the bytes the import is about to allocate and
// has a helper thread populate those pages while the caller reads the model, so the reading mostly finds its pages
// already there (in small pages: huge pages made the import wait on the host's zeroing and the kernel's compaction,
// docs/benchmarks.md). Once done it runs a follow-up the
// caller gives (`ldmsim run` commits the machine's first local-store and device pages) until the import ends.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "heap_retention.hpp"

namespace ldmsim {

class HeapPrefault {
 public:
  /// Populates about `bytes` of free heap from a helper thread (capped at 1 GiB; nothing under 2 MiB, which the
  /// import faults in for less than the helper would spend). While it lives, a HeapRetention keeps up to 1 GiB of
  /// freed heap and serves blocks up to 32 MiB from the heap (not mmap). Populates nothing where the heap
  /// is not glibc's contiguous one (another allocator, a sanitizer) or the kernel lacks MADV_POPULATE_WRITE
  /// (before Linux 5.14: the import's own touches fault the pages in).
  /// `then`: more work for the helper once the heap is populated (or at once where nothing is), given the flag
  /// the destructor sets: it should return soon after.
  explicit HeapPrefault(std::uint64_t bytes, std::function<void(const std::atomic<bool>& stop)> then = {});
  /// Stops the helper thread (a failed or finished import needs no more pages) and lets go of its HeapRetention.
  ~HeapPrefault();
  HeapPrefault(const HeapPrefault&) = delete;
  HeapPrefault& operator=(const HeapPrefault&) = delete;

  /// Bytes handed to the helper thread (0: it did nothing).
  std::size_t populating() const { return bytes_; }
  /// Bytes the helper thread has populated so far.
  std::size_t populated() const { return populated_.load(); }
  /// Waits until the helper thread has populated everything and its follow-up has returned (only the destructor
  /// sets the stop flag: a follow-up that waits for it must not be combined with finish()).
  void finish();

 private:
  std::size_t bytes_ = 0;
  std::optional<HeapRetention> retention_;  // held while the import allocates
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> populated_{0};
  std::thread helper_;
};

}  // namespace ldmsim
