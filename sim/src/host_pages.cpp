// Committing host pages ahead of their first touch (see host_pages.hpp).
#include "ldmsim/sim/host_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace ldmsim {

namespace {
constexpr std::size_t kStepBytes = std::size_t{256} << 10;  // per call, so `stop` is seen within ~0.1 ms
}  // namespace

void populate_pages(std::byte* begin, std::size_t bytes, const std::atomic<bool>& stop) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) & ~(page - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(begin) + bytes) & ~(page - 1);
  for (std::uintptr_t at = first; at < end && !stop.load(std::memory_order_relaxed); at += kStepBytes) {
    const std::size_t n = std::min<std::size_t>(kStepBytes, end - at);
    auto* p = reinterpret_cast<std::byte*>(at);
#if defined(MADV_POPULATE_WRITE)
    if (madvise(p, n, MADV_POPULATE_WRITE) == 0) continue;
#endif
    // Linux before 5.14: fault each page in by writing back what it holds.
    for (std::size_t i = 0; i < n; i += page) {
      volatile std::byte* b = p + i;
      *b = *b;
    }
  }
}

}  // namespace ldmsim
