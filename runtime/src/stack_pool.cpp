// Fiber stack pool (see stack_pool.hpp).
#include "stack_pool.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace ldmsim::detail {

StackPool::StackPool(std::size_t stacks, std::size_t stack_bytes) : stacks_(stacks) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = (stack_bytes + page - 1) / page * page;
  slot_bytes_ = stack_bytes_ + page;  // guard page at the bottom of each slot
  mapped_bytes_ = slot_bytes_ * stacks_;
  void* base = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<std::byte*>(base);
  for (std::size_t i = 0; i < stacks_; ++i) mprotect(base_ + i * slot_bytes_, page, PROT_NONE);
}

StackPool::~StackPool() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
}

boost::context::stack_context StackPool::Slice::allocate() {
  boost::context::stack_context context;
  context.size = pool->stack_bytes_;
  context.sp = pool->base_ + index * pool->slot_bytes_ + pool->slot_bytes_;  // stacks grow down
  return context;
}

}  // namespace ldmsim::detail
