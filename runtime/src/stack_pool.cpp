// Fiber stack pool (see stack_pool.hpp).
#include "stack_pool.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_pages.hpp"

namespace ldmsim::detail {

namespace {

/// madvise(MADV_GUARD_INSTALL), Linux 6.13 and later (uapi mman-common.h): a guard page that faults like PROT_NONE
/// without splitting the mapping, so the stacks stay one memory map and cost no mprotect each. Older kernels
/// refuse it (EINVAL) and the pool protects each guard page instead.
constexpr int kMadvGuardInstall = 102;

bool install_guard(std::byte* page_start, std::size_t page) {
  return madvise(page_start, page, kMadvGuardInstall) == 0;
}

}  // namespace

StackPool::StackPool(std::size_t stacks, std::size_t stack_bytes) : stacks_(stacks) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = (stack_bytes + page - 1) / page * page;
  slot_bytes_ = stack_bytes_ + page;  // guard page at the bottom of each slot
  mapped_bytes_ = slot_bytes_ * stacks_;
  void* base = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<std::byte*>(base);
  if (stacks_ > 0 && install_guard(base_, page)) {
    for (std::size_t i = 1; i < stacks_; ++i) {
      if (!install_guard(base_ + i * slot_bytes_, page)) {
        munmap(base_, mapped_bytes_);
        base_ = nullptr;
        throw ConfigError(fmt::format("cannot install the guard page of fiber stack {} of {} ({})", i, stacks_,
                                      std::strerror(errno)));
      }
    }
    return;
  }
  for (std::size_t i = 0; i < stacks_; ++i) {
    if (mprotect(base_ + i * slot_bytes_, page, PROT_NONE) != 0) {
      munmap(base_, mapped_bytes_);
      base_ = nullptr;
      throw ConfigError(
          fmt::format("cannot protect the guard page of fiber stack {} of {} ({}): the host's memory-map "
                      "limit (vm.max_map_count) is exhausted",
                      i, stacks_, std::strerror(errno)));
    }
  }
}

void check_stack_budget(std::size_t stacks, std::string_view what) {
  std::size_t limit = 65530;  // Linux's default when /proc cannot tell
  if (std::ifstream in("/proc/sys/vm/max_map_count"); in) in >> limit;
  // What the process maps besides the stacks (libraries, heap, ldm and trace buffers): a generous allowance.
  constexpr std::size_t kOtherMaps = 4096;
  const std::size_t budget = limit > kOtherMaps ? (limit - kOtherMaps) / 2 : 0;
  if (stacks > budget) {
    throw ConfigError(
        fmt::format("{} has {} cores; each simulated core runs on a fiber stack with a guard page (2 "
                    "memory maps), and this host's vm.max_map_count of {} leaves room for {} cores. "
                    "Use fewer cores, or raise the limit (sysctl vm.max_map_count=N)",
                    what, stacks, limit, budget));
  }
}

StackPool::~StackPool() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
}

boost::context::stack_context StackPool::Slice::allocate() {
  boost::context::stack_context context;
  context.size = pool->stack_bytes_;
  context.sp = pool->base_ + index * pool->slot_bytes_ + pool->slot_bytes_;  // stacks grow down
  // The fiber's record and its first frames go at the top at once: committed by one call, which costs a VM a
  // fraction of the page faults it saves (docs/benchmarks.md, "Fiber stacks committed at creation").
  const std::size_t top = std::min(kCommittedTopBytes, pool->stack_bytes_);
  const std::atomic<bool> never{false};
  populate_pages(static_cast<std::byte*>(context.sp) - top, top, never);
  return context;
}

}  // namespace ldmsim::detail
