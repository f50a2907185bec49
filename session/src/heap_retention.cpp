// glibc's malloc thresholds raised while simulating (see heap_retention.hpp).
#include "heap_retention.hpp"

#include <algorithm>
#include <climits>
#include <mutex>
#include <set>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ldmsim {

namespace {

constexpr int kHeapBlockLimit = 32 << 20;      // glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX)
constexpr int kDefaultThreshold = 128 * 1024;  // glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD defaults

struct Holders {
  std::mutex mutex;
  std::multiset<std::uint64_t> keep;  // keep_bytes of every live holder that glibc accepted
};

Holders& holders() {
  static Holders instance;
  return instance;
}

#if defined(__GLIBC__)
int as_threshold(std::uint64_t bytes) {
  return static_cast<int>(std::min<std::uint64_t>(bytes, INT_MAX));
}
#endif

}  // namespace

HeapRetention::HeapRetention(std::uint64_t keep_bytes) : keep_bytes_(keep_bytes) {
#if defined(__GLIBC__)
  Holders& h = holders();
  const std::lock_guard lock(h.mutex);
  const std::uint64_t keep = std::max(keep_bytes, h.keep.empty() ? 0 : *h.keep.rbegin());
  if (mallopt(M_MMAP_THRESHOLD, kHeapBlockLimit) != 1 || mallopt(M_TRIM_THRESHOLD, as_threshold(keep)) != 1) {
    if (h.keep.empty()) {  // none raised before: leave glibc as it was
      mallopt(M_MMAP_THRESHOLD, kDefaultThreshold);
      mallopt(M_TRIM_THRESHOLD, kDefaultThreshold);
    }
    return;
  }
  h.keep.insert(keep_bytes);
  active_ = true;
#endif
}

HeapRetention::~HeapRetention() {
#if defined(__GLIBC__)
  if (!active_) return;
  Holders& h = holders();
  const std::lock_guard lock(h.mutex);
  h.keep.erase(h.keep.find(keep_bytes_));
  if (h.keep.empty()) {
    mallopt(M_MMAP_THRESHOLD, kDefaultThreshold);
    mallopt(M_TRIM_THRESHOLD, kDefaultThreshold);
  } else {
    mallopt(M_TRIM_THRESHOLD, as_threshold(*h.keep.rbegin()));
  }
#endif
}

}  // namespace ldmsim
