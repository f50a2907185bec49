// zero_touched: every byte of the range reads zero afterwards, and whole pages the process never touched are
// left untouched (writing zeros into them would only fault them in).
#include "ldmsim/sim/host_pages.hpp"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <vector>

namespace {

/// Residency of each page of [p, p + pages * page) (mincore).
std::vector<bool> resident(std::byte* p, std::size_t pages, std::size_t page) {
  std::vector<unsigned char> vec(pages);
  REQUIRE(mincore(p, pages * page, vec.data()) == 0);
  std::vector<bool> out(pages);
  for (std::size_t i = 0; i < pages; ++i) out[i] = (vec[i] & 1U) != 0;
  return out;
}

}  // namespace

TEST_CASE("zero_touched zeroes a range and faults in no page that was never touched", "[memory][pages]") {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  constexpr std::size_t kPages = 64;
  void* mapped = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapped != MAP_FAILED);
  madvise(mapped, kPages * page, MADV_NOHUGEPAGE);  // a huge page would commit the untouched pages with the touched
  auto* base = static_cast<std::byte*>(mapped);
  // Pages 3, 10 and 11 and the last written; the range starts and ends inside pages 2 and 62 (partial pages).
  for (const std::size_t p : {std::size_t{2}, std::size_t{3}, std::size_t{10}, std::size_t{11}, kPages - 1})
    std::memset(base + p * page, 0x5a, page);
  const std::size_t begin = 2 * page + 100, end = 62 * page + 7;
  ldmsim::zero_touched(base + begin, end - begin);
  // Residency first: reading a page maps it.
  const bool pagemap_readable = std::ifstream("/proc/self/pagemap").good();
  if (pagemap_readable) {  // otherwise zero_touched zeroes every page, as documented
    const std::vector<bool> in_core = resident(base, kPages, page);
    for (std::size_t p = 4; p < 62; ++p) {
      if (p == 10 || p == 11) continue;
      INFO("page " << p);
      CHECK_FALSE(in_core[p]);
    }
  }
  for (std::size_t i = 0; i < kPages * page; ++i) {
    const bool inside = i >= begin && i < end;
    const bool written = (i / page == 2 || i / page == 3 || i / page == 10 || i / page == 11 || i / page == kPages - 1);
    const auto expected = inside || !written ? std::byte{0} : std::byte{0x5a};
    if (base[i] != expected) FAIL("byte " << i << " reads " << static_cast<int>(base[i]));
  }
  munmap(mapped, kPages * page);
}

TEST_CASE("zero_touched zeroes a range within one page", "[memory][pages]") {
  std::vector<std::byte> bytes(64, std::byte{0x11});
  ldmsim::zero_touched(bytes.data() + 5, 20);
  for (std::size_t i = 0; i < bytes.size(); ++i) CHECK(bytes[i] == (i >= 5 && i < 25 ? std::byte{0} : std::byte{0x11}));
}

TEST_CASE("zero_touched in a forked child reads the child's page map, not its parent's", "[memory][pages]") {
  // The parent has the page map open and never touches the pages; the child writes them, then zeroes them.
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  constexpr std::size_t kPages = 16;
  void* mapped = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapped != MAP_FAILED);
  auto* base = static_cast<std::byte*>(mapped);
  ldmsim::zero_touched(base, kPages * page);  // opens the parent's page map, touching nothing
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::memset(base, 0x5a, kPages * page);
    ldmsim::zero_touched(base, kPages * page);
    for (std::size_t i = 0; i < kPages * page; ++i) {
      if (base[i] != std::byte{0}) _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  munmap(mapped, kPages * page);
}
