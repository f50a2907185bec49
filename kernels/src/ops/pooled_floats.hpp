// Private: host float vectors a kernel's core borrows for one launch. Every simulated core allocated its own (a
// depthwise conv launch: six vectors on each of 384 cores, a launch after another); the cores of a host thread now
// take them from a pool kept in their group state and give them back when their kernel ends, so after the first
// launches they allocate nothing. The host's work only: nothing simulated depends on where the floats live.
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "ldmsim/runtime/core.hpp"

namespace ldmsim::ops {

/// The spare vectors of a host thread's cores (Core::group_state: one thread at a time uses it), one list per role: a
/// vector comes back to the role it served, so each keeps about the capacity that role needs (a kernel's largest
/// buffer does not end up held once per role and core).
struct FloatPool {
  static constexpr std::size_t kRoles = 8;
  std::array<std::vector<std::vector<float>>, kRoles> spare;
};

/// A float vector borrowed from the core's pool for the borrower's life: empty when taken, its capacity kept.
/// `role` (< FloatPool::kRoles) names what the kernel uses it for.
class PooledFloats {
 public:
  PooledFloats(Core& core, std::size_t role) : spare_(core.group_state<FloatPool>().spare.at(role)) {
    if (spare_.empty()) return;
    floats_ = std::move(spare_.back());
    spare_.pop_back();
    floats_.clear();
  }
  ~PooledFloats() {
    try {
      spare_.push_back(std::move(floats_));
    } catch (...) {  // no room to keep it: the vector is freed instead
    }
  }
  PooledFloats(const PooledFloats&) = delete;
  PooledFloats& operator=(const PooledFloats&) = delete;

  std::vector<float>& operator*() { return floats_; }
  const std::vector<float>& operator*() const { return floats_; }

 private:
  std::vector<std::vector<float>>& spare_;
  std::vector<float> floats_;
};

}  // namespace ldmsim::ops
