// Committing host pages ahead of their first touch (see host_pages.hpp).
#include "ldmsim/sim/host_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace ldmsim {

namespace {
constexpr std::size_t kStepBytes = std::size_t{256} << 10;  // per call, so `stop` is seen within ~0.1 ms

/// This process's page map (-1 where it cannot be read), kept open. The file describes the process that opened
/// it, so a forked child opens its own.
int pagemap_fd() {
  static std::mutex mutex;
  static int fd = -1;
  static pid_t owner = 0;
  const pid_t me = getpid();
  const std::lock_guard lock(mutex);
  if (owner != me) {
    if (fd >= 0) close(fd);  // the parent's, inherited
    fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    owner = me;
  }
  return fd;
}

/// Reads the page map entries of `count` pages from page number `first`; false where it cannot.
bool read_pagemap(std::uintptr_t first, std::size_t count, std::uint64_t* out) {
  const int fd = pagemap_fd();
  if (fd < 0) return false;
  const std::size_t want = count * sizeof(std::uint64_t);
  const auto got = pread(fd, out, want, static_cast<off_t>(first * sizeof(std::uint64_t)));
  return got == static_cast<ssize_t>(want);
}

constexpr std::uint64_t kPresent = std::uint64_t{1} << 63, kSwapped = std::uint64_t{1} << 62;
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

void zero_touched(std::byte* begin, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = (start + page - 1) & ~(page - 1);
  const std::uintptr_t end = (start + bytes) & ~(page - 1);
  if (first >= end) {  // no whole page: not worth a look
    std::memset(begin, 0, bytes);
    return;
  }
  std::memset(begin, 0, first - start);  // the partial pages at either end
  std::memset(reinterpret_cast<std::byte*>(end), 0, start + bytes - end);
  std::array<std::uint64_t, 512> entries{};
  for (std::uintptr_t at = first; at < end;) {
    const std::size_t count = std::min<std::size_t>(entries.size(), (end - at) / page);
    if (!read_pagemap(at / page, count, entries.data())) {
      std::memset(reinterpret_cast<std::byte*>(at), 0, end - at);
      return;
    }
    for (std::size_t i = 0; i < count;) {
      if ((entries[i] & (kPresent | kSwapped)) == 0) {
        ++i;
        continue;
      }
      std::size_t j = i + 1;  // a run of touched pages, zeroed at once
      while (j < count && (entries[j] & (kPresent | kSwapped)) != 0) ++j;
      std::memset(reinterpret_cast<std::byte*>(at + i * page), 0, (j - i) * page);
      i = j;
    }
    at += count * page;
  }
}

std::shared_ptr<std::byte> fresh_huge_buffer(std::size_t bytes) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  if (bytes > SIZE_MAX - kHugePage) throw std::bad_alloc();
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
  (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without it the pages are small
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
}

}  // namespace ldmsim
