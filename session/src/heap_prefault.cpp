// Populating heap pages ahead of an import (see heap_prefault.hpp).
#include "heap_prefault.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <system_error>
#include <vector>

namespace ldmsim {

namespace {

constexpr std::size_t kBlockBytes = std::size_t{16} << 20;  // under the 32 MiB mmap threshold of HeapRetention
constexpr std::size_t kStepBytes = std::size_t{2} << 20;    // populated per call, so the parse can overlap
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 30;
// Less than a step is left to fault in as the import touches it: a few hundred pages cost less than the helper's
// thread (a 500 kB LSTM model's import once waited up to 35 ms on a populated 16 MiB block).
constexpr std::uint64_t kMinBytes = kStepBytes;

/// The first page boundary at or after `at`.
std::byte* page_up(std::byte* at) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  return reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(at) + page - 1) & ~(page - 1));
}

/// Populates [begin, end) writable a step at a time, counting the bytes done in `done`; stops at the first
/// failure (a kernel before 5.14: nothing lost, the pages fault in on first touch as usual).
void populate(std::byte* begin, std::byte* end, const std::atomic<bool>& stop, std::atomic<std::size_t>& done) {
  std::byte* at = page_up(begin);
  while (at < end && !stop.load(std::memory_order_relaxed)) {
    const std::size_t n = std::min(kStepBytes, static_cast<std::size_t>(end - at));
#if defined(MADV_POPULATE_WRITE)
    if (madvise(at, n, MADV_POPULATE_WRITE) != 0) return;
#else
    return;
#endif
    at += n;
    done += n;
  }
}

}  // namespace

HeapPrefault::HeapPrefault(std::uint64_t bytes, std::function<void(const std::atomic<bool>& stop)> then) {
  std::byte* begin = nullptr;
  std::byte* end = nullptr;
#if defined(__GLIBC__)
  if (bytes >= kMinBytes) {
    bytes = std::min(bytes, kMaxBytes);
    std::vector<void*> blocks;
    blocks.reserve((bytes + kBlockBytes - 1) / kBlockBytes);  // nothing to throw once the allocator is tuned
    // Large blocks from the heap, and free heap kept, so the import's buffers land in the pages populated here.
    if (retention_.emplace(kMaxBytes).active()) {
      // Grow the heap by whole blocks and free them again: they merge into the free top of the heap (the first
      // may start in free space below the old break).
      for (std::uint64_t grown = 0; grown < bytes; grown += kBlockBytes) blocks.push_back(std::malloc(kBlockBytes));
      begin = static_cast<std::byte*>(blocks.front());
      end = static_cast<std::byte*>(sbrk(0));
      // From the brk heap: in order, below the break, and the whole range not much more than the blocks.
      bool from_heap =
          begin != nullptr && end > begin && static_cast<std::size_t>(end - begin) <= (blocks.size() + 1) * kBlockBytes;
      for (std::size_t i = 0; from_heap && i < blocks.size(); ++i) {
        auto* block = static_cast<std::byte*>(blocks[i]);
        from_heap = block != nullptr && block >= begin && block + kBlockBytes <= end &&
                    (i == 0 || block > static_cast<std::byte*>(blocks[i - 1]));
      }
      for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) std::free(*it);
      // The heap grew by whole blocks; the import needs `bytes` of them (in whole steps), in small pages: populated
      // as transparent huge pages they often made the import wait on the host's zeroing or the kernel's compaction
      // (docs/benchmarks.md).
      if (from_heap) {
        end = std::min(end, page_up(begin) + (bytes + kStepBytes - 1) / kStepBytes * kStepBytes);
      } else {  // not glibc's brk heap (an interposed allocator, a sanitizer): nothing to populate
        begin = end = nullptr;
      }
    }
  }
#else
  (void)bytes;
#endif
  if (begin == nullptr && !then) return;
  try {
    helper_ = std::thread([this, begin, end, then = std::move(then)] {
      if (begin != nullptr) populate(begin, end, stop_, populated_);
      try {
        if (then) then(stop_);
      } catch (const std::exception&) {
        // best effort (a commit that failed for want of memory): whatever it would have populated faults in later
      }
    });
    bytes_ = static_cast<std::size_t>(end - begin);
  } catch (const std::system_error&) {
    // no thread to spare: the import faults its pages in itself, as without a prefault
  }
}

void HeapPrefault::finish() {
  if (helper_.joinable()) helper_.join();
}

HeapPrefault::~HeapPrefault() {
  stop_ = true;  // the import is over (or failed): the rest would only cost time and memory
  finish();
}

}  // namespace ldmsim
