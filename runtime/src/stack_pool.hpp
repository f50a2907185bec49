// Fiber stacks for one core group: one mapping reserved at machine creation, a guard page below each
// stack, reused by every launch (no allocation per launch; pages are committed only when touched).
#pragma once

#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <string_view>
#include <utility>

namespace ldmsim::detail {

/// Throws ConfigError when `stacks` fiber stacks (2 memory maps each: the stack and its guard page) would not fit
/// the host's memory-map limit (vm.max_map_count) beside what the process already maps, naming the limit and
/// how many cores would fit.
void check_stack_budget(std::size_t stacks, std::string_view what);

class StackPool {
 public:
  /// Bytes at the top of a stack committed when its fiber is made: its record and the frames every core's loop
  /// and a kernel's DMA calls reach.
  static constexpr std::size_t kCommittedTopBytes = 8192;
  StackPool(std::size_t stacks, std::size_t stack_bytes);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  /// A Boost.Context StackAllocator handing out stack `index` of the pool.
  struct Slice {
    StackPool* pool;
    std::size_t index;
    boost::context::stack_context allocate();
    void deallocate(boost::context::stack_context&) noexcept {}
  };
  Slice slice(std::size_t index) { return Slice{this, index}; }
  /// [low, high) addresses of stack `index` (the guard page excluded).
  std::pair<const std::byte*, const std::byte*> bounds(std::size_t index) const {
    const std::byte* high = base_ + (index + 1) * slot_bytes_;
    return {high - stack_bytes_, high};
  }

 private:
  std::byte* base_ = nullptr;
  std::size_t stacks_;
  std::size_t stack_bytes_;
  std::size_t slot_bytes_;
  std::size_t mapped_bytes_;
};

}  // namespace ldmsim::detail
