// Private: host threads that round parts of large fp32 initializers to fp16 while the skeleton walk
// (onnx_skeleton.cpp) reads on. Writing the fp16 values is mostly first touches of fresh pages, which two host
// threads get through in less time than one (docs/benchmarks.md, "Weights rounded on the run's host threads").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ldmsim/sim/fp16.hpp"

namespace ldmsim::onnx_import {

class RoundingHelpers {
 public:
  /// Up to `helpers` threads (none: the caller rounds every part, in finish) reading model file `fd`; they start
  /// with the first part (where a thread cannot start, the caller rounds its share).
  RoundingHelpers(int fd, unsigned helpers) : fd_(fd), helpers_(helpers) {}
  /// Stops the threads; parts not started are dropped.
  ~RoundingHelpers();
  RoundingHelpers(const RoundingHelpers&) = delete;
  RoundingHelpers& operator=(const RoundingHelpers&) = delete;

  /// Threads that may take parts.
  unsigned helpers() const { return helpers_; }
  /// Rounds the `count` fp32 values at file offset `offset` into `out`, inside the buffer `owner` keeps alive
  /// until the part is done (so an exception between here and finish frees nothing a thread still writes); adds
  /// the values it saturated to +-65504 to `saturated`.
  void add(std::uint64_t offset, std::uint64_t count, f16* out, std::shared_ptr<const void> owner,
           std::shared_ptr<std::atomic<std::uint64_t>> saturated);
  /// Waits until the threads have taken and rounded every part handed over (returns at once when none runs).
  void drain();
  /// Rounds what is left with the caller's help and waits for every part; false when a part's bytes could not all
  /// be read (the file ends early or changed), as the walk's own read would.
  bool finish();

 private:
  struct Part {
    std::uint64_t offset, count;
    f16* out;
    std::shared_ptr<const void> owner;
    std::shared_ptr<std::atomic<std::uint64_t>> saturated;
  };
  void work();
  /// Rounds one part through `buffer` (kChunkBytes), counting saturated values into `saturated`; false on a short
  /// read.
  bool round(const Part& part, char* buffer, std::uint64_t& saturated) const;
  void start_threads();

  int fd_;
  unsigned helpers_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Part> parts_;
  unsigned running_ = 0;  // parts being rounded
  unsigned live_ = 0;     // threads taking parts (one whose buffer could not be allocated takes none)
  bool stop_ = false, failed_ = false, started_ = false;
  std::vector<std::jthread> threads_;
};

}  // namespace ldmsim::onnx_import
