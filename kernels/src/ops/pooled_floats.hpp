// Private: host float vectors a kernel's core borrows for one launch. Every simulated core allocated its own (a
// depthwise conv launch: six vectors on each of 384 cores, a launch after another); the cores of a host thread now
// take them from a pool kept in their group state and give them back when their kernel ends, so after the first
// launches they allocate nothing. The host's work only: nothing simulated depends on where the floats live.
#pragma once

#include <utility>
#include <vector>

#include "ldmsim/runtime/core.hpp"

namespace ldmsim::ops {

/// The spare vectors of a host thread's cores (Core::group_state: one thread at a time uses it).
struct FloatPool {
  std::vector<std::vector<float>> spare;
};

/// A float vector borrowed from the core's pool for the borrower's life: empty when taken, its capacity kept.
class PooledFloats {
 public:
  explicit PooledFloats(Core& core) : pool_(core.group_state<FloatPool>()) {
    if (pool_.spare.empty()) return;
    floats_ = std::move(pool_.spare.back());
    pool_.spare.pop_back();
    floats_.clear();
  }
  ~PooledFloats() { pool_.spare.push_back(std::move(floats_)); }
  PooledFloats(const PooledFloats&) = delete;
  PooledFloats& operator=(const PooledFloats&) = delete;

  std::vector<float>& operator*() { return floats_; }
  const std::vector<float>& operator*() const { return floats_; }

 private:
  FloatPool& pool_;
  std::vector<float> floats_;
};

}  // namespace ldmsim::ops
