// Private to the executor: a whole op's constants held in every core group's memory (docs/splitting.md, "Constants
// in every group's memory"). A staged constant in group 0's memory gets a copy in each other group's, registered as
// its replica (MainMemory::add_replica), so that every group's DMA reads its own copy of what the op's kernel
// addresses once.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "placement.hpp"

namespace ldmsim::executor_detail {

/// One copy of a replicated constant: the group whose memory holds it, and the tensor.
struct ReplicaCopy {
  int group = 0;
  DeviceTensor tensor;
};

class ConstantReplicas {
 public:
  explicit ConstantReplicas(RunState& state);
  /// Copies `home` (a staged constant, in group 0's memory) into every other group's memory, each registered as its
  /// replica. A group whose memory cannot hold a copy reads group 0's. The copies are held by the run (RunState) and
  /// go with release().
  std::vector<ReplicaCopy> replicate(const DeviceTensor& home);
  /// Frees copies made by replicate() (the replication ends with the first).
  void release(const std::vector<ReplicaCopy>& copies);
  /// Constants replicated so far, and the bytes of their copies.
  std::size_t constants() const { return constants_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  RunState& s_;
  std::vector<std::unique_ptr<Machine>> views_;  // per group, made when first needed; [0] unused
  std::size_t constants_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace ldmsim::executor_detail
