// Private: host threads that round parts of large fp32 initializers to fp16 while the skeleton walk
// (onnx_skeleton.cpp) reads on. A first touch of the fp16 buffers' fresh pages is most of that rounding's time
// (docs/benchmarks.md), and first touches on two host threads take about half as long as on one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "ldmsim/sim/fp16.hpp"

namespace ldmsim::onnx_import {

class RoundingHelpers {
 public:
  /// `helpers` threads (none: every part is rounded by the caller, in finish) reading model file `fd`; they start
  /// with the first part.
  RoundingHelpers(int fd, unsigned helpers) : fd_(fd), helpers_(helpers) {}
  /// Stops the threads; parts not started are dropped (the walk gave up, or threw, and frees their buffers next).
  ~RoundingHelpers();
  RoundingHelpers(const RoundingHelpers&) = delete;
  RoundingHelpers& operator=(const RoundingHelpers&) = delete;

  /// Whether parts handed over run beside the caller.
  bool any() const { return helpers_ > 0; }
  unsigned helpers() const { return helpers_; }
  /// Rounds the `count` fp32 values at file offset `offset` into `out` (which must outlive finish or the destructor).
  void add(std::uint64_t offset, std::uint64_t count, f16* out);
  /// Rounds what is left with the caller's help and waits for every part; false when a part's bytes could not all
  /// be read (the file ends early or changed), as the walk's own read would.
  bool finish();

 private:
  struct Part {
    std::uint64_t offset, count;
    f16* out;
  };
  void work();
  /// Rounds one part through `buffer`; false on a short read.
  bool round(const Part& part, std::vector<char>& buffer) const;

  int fd_;
  unsigned helpers_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Part> parts_;
  unsigned running_ = 0;  // parts being rounded
  bool stop_ = false, failed_ = false;
  std::vector<std::jthread> threads_;  // started with the first part
};

}  // namespace ldmsim::onnx_import
