// Host products of one B tile run together (see product_queue.hpp).
#include "product_queue.hpp"

#include <algorithm>

#include "tile_math.hpp"

namespace ldmsim::ops {

void ProductQueue::add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                       std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch) {
  if (rows == 0) return;
  flush_touching(acc, acc + (rows - 1) * acc_pitch + cols);
  if (rows_ + rows > kMaxRows) flush();
  a_.insert(a_.end(), a, a + rows * depth);
  items_.push_back({b, acc, rows, cols, depth, acc_pitch, b_pitch, a_.size() - rows * depth});
  rows_ += rows;
}

void ProductQueue::flush_reading(const float* begin, const float* end) {
  for (const Item& item : items_) {
    if (item.b < end && begin < item.b + item.depth * item.b_pitch) {
      flush();
      return;
    }
  }
}

void ProductQueue::flush_touching(const float* begin, const float* end) {
  for (const Item& item : items_) {
    if (item.acc < end && begin < item.acc_end()) {
      flush();
      return;
    }
  }
}

void ProductQueue::discard_touching(const float* begin, const float* end) noexcept {
  std::erase_if(items_, [&](const Item& item) {
    const bool touches = item.acc < end && begin < item.acc_end();
    if (touches) rows_ -= item.rows;
    return touches;
  });
  if (items_.empty()) a_.clear();  // the others' A rows stay where their offsets say
}

void ProductQueue::flush() {
  if (items_.empty()) return;
  // Emptied however the flush ends: a product that ran must not run again (a failed allocation below fails the
  // kernel's run anyway).
  struct Emptied {
    ProductQueue& queue;
    ~Emptied() {
      queue.items_.clear();
      queue.a_.clear();
      queue.rows_ = 0;
    }
  } emptied{*this};
  done_.assign(items_.size(), false);
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (done_[i]) continue;
    const Item& first = items_[i];
    std::size_t rows = 0, count = 0, last = i;
    for (std::size_t j = i; j < items_.size(); ++j) {
      if (!done_[j] && items_[j].same_b(first)) {
        rows += items_[j].rows;
        ++count;
        last = j;
      }
    }
    if (count == 1) {
      multiply_add(a_.data() + first.a_offset, first.b, first.acc, first.rows, first.cols, first.depth, first.acc_pitch,
                   first.b_pitch);
      done_[i] = true;
      continue;
    }
    // The tile's rows side by side (no two queued products share an acc element, add() sees to it), one call, and
    // each acc row back where it came from.
    const std::size_t depth = first.depth, cols = first.cols;
    // Queued one after another (the usual case: a team's members in turn), the A rows lie side by side already.
    const bool adjacent = last - i + 1 == count;
    if (!adjacent) joint_a_.resize(rows * depth);
    joint_acc_.resize(rows * cols);
    std::size_t at = 0;
    for (std::size_t j = i; j < items_.size(); ++j) {
      const Item& item = items_[j];
      if (done_[j] || !item.same_b(first)) continue;
      if (!adjacent) std::copy_n(a_.data() + item.a_offset, item.rows * depth, joint_a_.data() + at * depth);
      for (std::size_t r = 0; r < item.rows; ++r) {
        std::copy_n(item.acc + r * item.acc_pitch, cols, joint_acc_.data() + (at + r) * cols);
      }
      at += item.rows;
    }
    const float* a = adjacent ? a_.data() + first.a_offset : joint_a_.data();
    multiply_add(a, first.b, joint_acc_.data(), rows, cols, depth, cols, first.b_pitch);
    at = 0;
    for (std::size_t j = i; j < items_.size(); ++j) {
      const Item& item = items_[j];
      if (done_[j] || !item.same_b(first)) continue;
      for (std::size_t r = 0; r < item.rows; ++r) {
        std::copy_n(joint_acc_.data() + (at + r) * cols, cols, item.acc + r * item.acc_pitch);
      }
      at += item.rows;
      done_[j] = true;
    }
  }
}

}  // namespace ldmsim::ops
