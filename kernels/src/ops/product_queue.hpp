// Private: the host products of cores that multiply the same B tile, run together. A group team's members each
// multiply their own few rows of A (often 2) by the tile their leader read; one multiply_add call per member feeds
// each B element loaded into only that many products. Queued on the host thread and run as one call over all the
// members' rows, each B element loaded feeds 4 rows (multiply_add's register blocks). Every acc
// element still gains its products one by one in k order, from the same operands, so the bits do not change; and
// every core is still charged its own work when it queues (simulated time is unaffected).
#pragma once

#include <cstddef>
#include <vector>

#include "ldmsim/runtime/core.hpp"

namespace ldmsim::ops {

class ProductQueue {
 public:
  /// The queue of the host thread running `core` (Core::group_state).
  static ProductQueue& of(Core& core) { return core.group_state<ProductQueue>(); }

  ProductQueue() = default;
  ProductQueue(const ProductQueue&) = delete;
  ProductQueue& operator=(const ProductQueue&) = delete;

  /// acc[rows x cols, rows acc_pitch apart] += a[rows x depth] b[depth x cols, rows b_pitch apart] (multiply_add),
  /// run now or by a later flush. `a` is copied; `b` must stay as it is until the product has run (flush_reading
  /// before it changes), and `acc` must not be read or written before (flush_touching). Products into an acc that
  /// a queued product touches run first, so each acc gains its products in the order they were added.
  void add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols, std::size_t depth,
           std::size_t acc_pitch, std::size_t b_pitch);
  /// Runs every queued product: those with the same B tile (pointer and shape) as one call.
  void flush();
  /// Runs the queue if a queued product reads b from [begin, end).
  void flush_reading(const float* begin, const float* end);
  /// Runs the queue if a queued product's acc overlaps [begin, end).
  void flush_touching(const float* begin, const float* end);
  /// Drops, without running them, the queued products whose acc overlaps [begin, end): accumulators about to be
  /// freed unread (a kernel that ends by a fault). Allocates nothing.
  void discard_touching(const float* begin, const float* end) noexcept;
  bool empty() const { return items_.empty(); }

 private:
  struct Item {
    const float* b;
    float* acc;
    std::size_t rows, cols, depth, acc_pitch, b_pitch;
    std::size_t a_offset;  ///< of its rows x depth A values in a_
    const float* acc_end() const { return acc + (rows - 1) * acc_pitch + cols; }
    bool same_b(const Item& o) const { return b == o.b && cols == o.cols && depth == o.depth && b_pitch == o.b_pitch; }
  };
  /// Beyond this many queued rows a flush comes first (bounds the queue's copies).
  static constexpr std::size_t kMaxRows = 512;

  std::vector<Item> items_;
  std::vector<float> a_;  ///< the queued products' A rows
  std::size_t rows_ = 0;
  std::vector<float> joint_a_, joint_acc_;  ///< one B tile's rows gathered for a single call
  std::vector<bool> done_;
};

}  // namespace ldmsim::ops
