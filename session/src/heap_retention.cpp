// glibc's malloc thresholds raised while simulating (see heap_retention.hpp).
#include "heap_retention.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
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
/// The user set glibc's malloc thresholds (environment or tunables): theirs stay, nothing is raised or reset.
bool user_tunes_malloc() {
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr || std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr) return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && (std::strstr(tunables, "glibc.malloc.mmap_threshold") != nullptr ||
                                 std::strstr(tunables, "glibc.malloc.trim_threshold") != nullptr);
}

int as_threshold(std::uint64_t bytes) {
  return static_cast<int>(std::min<std::uint64_t>(bytes, INT_MAX));
}
#endif

}  // namespace

HeapRetention::HeapRetention(std::uint64_t keep_bytes) : keep_bytes_(keep_bytes) {
#if defined(__GLIBC__)
  if (user_tunes_malloc()) return;
  Holders& h = holders();
  const std::lock_guard lock(h.mutex);
  const bool first = h.keep.empty();
  const auto mine = h.keep.insert(keep_bytes);  // first: a throw leaves glibc untouched
  if (mallopt(M_MMAP_THRESHOLD, kHeapBlockLimit) != 1 ||
      mallopt(M_TRIM_THRESHOLD, as_threshold(*h.keep.rbegin())) != 1) {
    h.keep.erase(mine);
    if (first) {  // none raised before: leave glibc as it was
      mallopt(M_MMAP_THRESHOLD, kDefaultThreshold);
      mallopt(M_TRIM_THRESHOLD, kDefaultThreshold);
    }
    return;
  }
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
