// Private to the fused kernels' estimates (fused_estimate.cpp, attention_estimate.cpp): the requests they price.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim::fusion {

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

/// A contiguous request of `bytes` (rounded up to the arch's granularity) in the home group's memory.
inline DmaRequest contiguous_request(DmaOp op, std::uint64_t bytes, const Arch& arch) {
  DmaRequest r;
  r.op = op;
  r.main = MainMemory::kBase;
  r.length = std::max<std::uint64_t>(1, ceil_div(bytes, arch.dma.granularity_bytes)) * arch.dma.granularity_bytes;
  return r;
}

}  // namespace ldmsim::fusion
